// Over 600 lines (~670) and one file on purpose: libsndfile's file and
// stream paths of AudioFileSource share its members (the descriptor, the
// byte stream, the header walk, libsndfile's handle) and the hand-off of
// what libsndfile does not recognise to FFmpeg (ffmpeg_source.hpp); the
// read-ahead wrapper and open_source() are short.
#include <fcntl.h>
#include <sndfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "pipeline/io/byte_stream.hpp"
#include "pipeline/io/caf_guard.hpp"
#include "pipeline/io/ffmpeg_source.hpp"
#include "pipeline/io/source.hpp"

namespace sigstream {

std::string sndfile_format_name(int format) {
  SF_FORMAT_INFO major{};
  major.format = format & SF_FORMAT_TYPEMASK;
  std::string name = "unknown";
  if (sf_command(nullptr, SFC_GET_FORMAT_INFO, &major, sizeof major) == 0 && major.extension)
    name = major.extension;
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
      return name + " pcm8";
    case SF_FORMAT_PCM_U8:
      return name + " pcm8u";
    case SF_FORMAT_PCM_16:
      return name + " pcm16";
    case SF_FORMAT_PCM_24:
      return name + " pcm24";
    case SF_FORMAT_PCM_32:
      return name + " pcm32";
    case SF_FORMAT_FLOAT:
      return name + " float";
    case SF_FORMAT_DOUBLE:
      return name + " double";
    default:
      break;
  }
  SF_FORMAT_INFO sub{};
  sub.format = format & SF_FORMAT_SUBMASK;
  std::string s = "unknown";
  if (sf_command(nullptr, SFC_GET_FORMAT_INFO, &sub, sizeof sub) == 0 && sub.name)
    s = sub.name;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return name + " " + s;
}

bool sndfile_is_native_pcm16(int format) noexcept {
  if constexpr (std::endian::native != std::endian::little)
    return false;
  const int major = format & SF_FORMAT_TYPEMASK;
  const bool little_container = major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX ||
                                major == SF_FORMAT_W64 || major == SF_FORMAT_RF64;
  const int endian = format & SF_FORMAT_ENDMASK;
  const bool little = (little_container && endian == SF_ENDIAN_FILE) || endian == SF_ENDIAN_LITTLE;
  return (little_container || major == SF_FORMAT_RAW) && little &&
         (format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_16;
}

namespace {

// A regular file libsndfile does not recognise (open_audio_file then asks FFmpeg).
struct NotSndfileFormat : Error {
  using Error::Error;
};

// A stream (standard input, a FIFO) libsndfile does not recognise: the
// descriptor and the bytes read from it so far go to FFmpeg.
struct NotSndfileStream : Error {
  struct Fd {
    int fd = -1;
    ~Fd() {
      if (fd >= 0)
        ::close(fd);
    }
  };
  NotSndfileStream(const std::string& message, int fd, std::vector<unsigned char> bytes)
      : Error(ErrorKind::io, message), source(std::make_shared<Fd>()),
        head(std::make_shared<std::vector<unsigned char>>(std::move(bytes))) {
    source->fd = fd; // (not through a temporary Fd, whose destructor would close it)
  }
  std::shared_ptr<Fd> source;
  std::shared_ptr<std::vector<unsigned char>> head;
};

// Whether a file starts as one of the containers libsndfile reads: WAV
// (RIFF, RIFX, RF64, BW64), Wave64, AIFF/AIFC and IFF (FORM), FLAC, Ogg,
// CAF, AU (either byte order), VOC, MP3 (an ID3 tag, or a frame's sync
// with a layer: AAC's ADTS has the sync and layer 0, and goes to FFmpeg).
bool sndfile_magic(const std::vector<unsigned char>& h) {
  if (h.size() >= 2 && h[0] == 0xFF && (h[1] & 0xE0) == 0xE0 && ((h[1] >> 1) & 3) != 0)
    return true;
  if (h.size() >= 3 && std::memcmp(h.data(), "ID3", 3) == 0)
    return true;
  if (h.size() >= 19 && std::memcmp(h.data(), "Creative Voice File", 19) == 0)
    return true;
  static constexpr const char* kMagic[] = {"RIFF", "RIFX", "RF64", "BW64", "riff", "FORM",
                                           "fLaC", "OggS", "caff", ".snd", "dns."};
  if (h.size() >= 4)
    for (const char* m : kMagic)
      if (std::memcmp(h.data(), m, 4) == 0)
        return true;
  return false;
}

} // namespace

namespace {

// The in-memory type and PCM width that carries a file's samples exactly.
void sample_type_of(int format, SampleType& type, int& bits) {
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
      type = SampleType::i16;
      bits = 8;
      return;
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW:
      type = SampleType::i16;
      bits = 16;
      return;
    case SF_FORMAT_PCM_24:
      type = SampleType::i32;
      bits = 24;
      return;
    case SF_FORMAT_PCM_32:
      type = SampleType::i32;
      bits = 32;
      return;
    default:
      type = SampleType::f32;
      bits = 0;
      return;
  }
}

// Frames beyond which a header's length can only be a placeholder (2^40
// frames is over 250 days at 48 kHz): libsndfile reports "the rest of the
// stream" for AU/FLAC/Ogg headers of unknown length this way.
constexpr std::int64_t kPlaceholderFrames = std::int64_t{1} << 40;

int raw_sndfile_format(RawEncoding e) {
  switch (e) {
    case RawEncoding::s8:
      return SF_FORMAT_RAW | SF_FORMAT_PCM_S8;
    case RawEncoding::u8:
      return SF_FORMAT_RAW | SF_FORMAT_PCM_U8;
    case RawEncoding::s16le:
      return SF_FORMAT_RAW | SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE;
    case RawEncoding::s16be:
      return SF_FORMAT_RAW | SF_FORMAT_PCM_16 | SF_ENDIAN_BIG;
    case RawEncoding::s24le:
      return SF_FORMAT_RAW | SF_FORMAT_PCM_24 | SF_ENDIAN_LITTLE;
    case RawEncoding::s24be:
      return SF_FORMAT_RAW | SF_FORMAT_PCM_24 | SF_ENDIAN_BIG;
    case RawEncoding::s32le:
      return SF_FORMAT_RAW | SF_FORMAT_PCM_32 | SF_ENDIAN_LITTLE;
    case RawEncoding::s32be:
      return SF_FORMAT_RAW | SF_FORMAT_PCM_32 | SF_ENDIAN_BIG;
    case RawEncoding::f32le:
      return SF_FORMAT_RAW | SF_FORMAT_FLOAT | SF_ENDIAN_LITTLE;
    case RawEncoding::f32be:
      return SF_FORMAT_RAW | SF_FORMAT_FLOAT | SF_ENDIAN_BIG;
    case RawEncoding::f64le:
      return SF_FORMAT_RAW | SF_FORMAT_DOUBLE | SF_ENDIAN_LITTLE;
    case RawEncoding::f64be:
      return SF_FORMAT_RAW | SF_FORMAT_DOUBLE | SF_ENDIAN_BIG;
  }
  return 0;
}

int raw_frame_bytes(RawEncoding e, int channels) {
  int b = 2;
  switch (e) {
    case RawEncoding::s8:
    case RawEncoding::u8:
      b = 1;
      break;
    case RawEncoding::s16le:
    case RawEncoding::s16be:
      b = 2;
      break;
    case RawEncoding::s24le:
    case RawEncoding::s24be:
      b = 3;
      break;
    case RawEncoding::s32le:
    case RawEncoding::s32be:
    case RawEncoding::f32le:
    case RawEncoding::f32be:
      b = 4;
      break;
    case RawEncoding::f64le:
    case RawEncoding::f64be:
      b = 8;
      break;
  }
  return b * channels;
}

// A path whose extension says "headerless PCM".
bool raw_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".raw" || ext == ".pcm";
}

class AudioFileSource final : public Source {
public:
  AudioFileSource(std::string path, const std::optional<RawSpec>& raw) : path_(std::move(path)) {
    const bool is_stdin = path_ == "-";
    if (!raw && raw_extension(path_) && !is_stdin)
      throw config_error(path_ + ": a headerless PCM file needs its description: --input-type raw "
                                 "--rate HZ --channels N --encoding E (YAML: source.raw)");
    struct stat st {};
    if (!is_stdin) {
      if (::stat(path_.c_str(), &st) != 0) {
        if (errno == ENOENT)
          throw io_error(path_ + ": no such file");
        throw io_error(path_ + ": cannot read it: " + std::strerror(errno));
      }
      if (S_ISDIR(st.st_mode))
        throw io_error(path_ + ": is a folder, expected an audio file");
    }
    if (!is_stdin && S_ISREG(st.st_mode) && !raw && !caf_of_unknown_size()) {
      open_file();
    } else {
      open_stream(is_stdin, raw);
    }
    if (reported_format_ == 0)
      reported_format_ = format_;
    sample_type_of(format_, info_.sample_type, info_.bits);
    raw_pcm16_ = sndfile_is_native_pcm16(format_);
    if (info_.frames == 0 || (info_.frames < 0 && info_.frames != kUnknownFrames))
      throw io_error(path_ + ": holds no audio frames (expected at least 1)");
    if (info_.channels < 1 || info_.sample_rate <= 0)
      throw io_error(path_ + ": bad header (channels " + std::to_string(info_.channels) +
                     ", rate " + std::to_string(info_.sample_rate) + ")");
  }
  AudioFileSource(const AudioFileSource&) = delete;
  AudioFileSource& operator=(const AudioFileSource&) = delete;
  ~AudioFileSource() override =
      default; // members go in reverse: libsndfile, its stream, the descriptor

  [[nodiscard]] const SourceInfo& info() const noexcept override { return info_; }
  [[nodiscard]] std::string path() const override { return path_; }
  [[nodiscard]] std::string format_name() const override {
    return sndfile_format_name(reported_format_);
  }
  [[nodiscard]] int sndfile_format() const noexcept override { return reported_format_; }
  [[nodiscard]] bool is_stream() const noexcept override {
    return stream_ && !stream_->has_length();
  }
  void cancel() noexcept override {
    if (stream_)
      stream_->cancel();
  }
  // In the plain containers libsndfile reads PCM, float and G.711 samples
  // through the stream as it is asked, with no read-ahead of its own: a
  // read of n frames needs n frames' bytes there. The codecs (FLAC, Vorbis,
  // Opus, MP3) decode ahead inside, where readiness cannot be seen: those
  // say ready always.
  [[nodiscard]] bool ready_now(std::int64_t frames) const noexcept override {
    if (!stream_)
      return true;
    switch (format_ & SF_FORMAT_TYPEMASK) {
      case SF_FORMAT_WAV:
      case SF_FORMAT_WAVEX:
      case SF_FORMAT_RF64:
      case SF_FORMAT_W64:
      case SF_FORMAT_AIFF:
      case SF_FORMAT_AU:
      case SF_FORMAT_CAF:
      case SF_FORMAT_RAW:
        break;
      default:
        return true;
    }
    int sample_bytes = 0;
    switch (format_ & SF_FORMAT_SUBMASK) {
      case SF_FORMAT_PCM_S8:
      case SF_FORMAT_PCM_U8:
      case SF_FORMAT_ULAW:
      case SF_FORMAT_ALAW:
        sample_bytes = 1;
        break;
      case SF_FORMAT_PCM_16:
        sample_bytes = 2;
        break;
      case SF_FORMAT_PCM_24:
        sample_bytes = 3;
        break;
      case SF_FORMAT_PCM_32:
      case SF_FORMAT_FLOAT:
        sample_bytes = 4;
        break;
      case SF_FORMAT_DOUBLE:
        sample_bytes = 8;
        break;
      default:
        return true;
    }
    return stream_->ready_now(frames * info_.channels * sample_bytes);
  }

  std::int64_t read(HostBlock& block, std::int64_t at, std::int64_t n) override {
    const std::int64_t offset = at * block.channels;
    if (info_.frames >= 0)
      n = std::min(n, info_.frames - position_);
    if (n <= 0 || ended_)
      return 0;
    sf_count_t got = 0;
    switch (block.type) {
      case SampleType::i16:
        if (raw_pcm16_) {
          const sf_count_t frame_bytes = 2 * static_cast<sf_count_t>(block.channels);
          got = sf_read_raw(file_.get(), block.as<short>() + offset, n * frame_bytes) / frame_bytes;
        } else {
          got = sf_readf_short(file_.get(), block.as<short>() + offset, n);
        }
        break;
      case SampleType::i32:
        got = sf_readf_int(file_.get(), block.as<int>() + offset, n);
        break;
      case SampleType::f32:
        got = sf_readf_float(file_.get(), block.as<float>() + offset, n);
        break;
    }
    if (stream_)
      stream_->rethrow_error();
    position_ += got;
    if (got == n)
      return got;
    if (info_.frames >= 0) {
      const std::string why =
          sf_error(file_.get()) != 0 ? sf_strerror(file_.get()) : "unexpected end of data";
      throw io_error(path_ + ": truncated or unreadable at frame " + std::to_string(position_) +
                     " of " + std::to_string(info_.frames) + " (" + why + ")");
    }
    // A stream of unknown length has ended.
    ended_ = true;
    if (sf_error(file_.get()) != 0)
      throw io_error(path_ + ": unreadable at frame " + std::to_string(position_) + " (" +
                     sf_strerror(file_.get()) + ")");
    if (raw_frame_bytes_ > 0) {
      // What libsndfile took beyond the whole frames, and what is left.
      const std::int64_t extra =
          stream_->position() + stream_->drain() - position_ * raw_frame_bytes_;
      if (extra > 0)
        throw io_error(path_ + ": the raw stream ends inside frame " + std::to_string(position_) +
                       " (" + std::to_string(extra) + " of its " +
                       std::to_string(raw_frame_bytes_) + " bytes; expected whole frames)");
    }
    return got;
  }

private:
  // The first bytes of the file (what a header fits in).
  [[nodiscard]] std::vector<unsigned char> file_header() const {
    std::vector<unsigned char> header(65536);
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return {};
    const ssize_t n = ::read(fd, header.data(), header.size());
    ::close(fd);
    header.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return header;
  }
  // A CAF saved from a pipe keeps its size -1, which libsndfile refuses: such
  // a file goes through the stream path, which hands libsndfile a size it takes.
  [[nodiscard]] bool caf_of_unknown_size() const {
    return header_length_unknown(SF_FORMAT_CAF, file_header());
  }

  // A seekable file: libsndfile opens it by name and knows its length.
  void open_file() {
    check_caf_file(path_);
    SF_INFO sfinfo{};
    file_.reset(sf_open(path_.c_str(), SFM_READ, &sfinfo));
    if (!file_) {
      // libsndfile words system errors as "System error : ..."; say plainly
      // what is wrong when it is the file system, else pass its reason on.
      if (::access(path_.c_str(), R_OK) != 0)
        throw io_error(path_ + ": cannot read it: " + std::strerror(errno));
      const std::string why = sf_strerror(nullptr);
      // Not a container libsndfile knows by its first bytes: FFmpeg's turn
      // (a damaged WAV, AIFF, FLAC, ... keeps libsndfile's reason). Told by
      // the file itself: libsndfile's last error is the process's, not this
      // thread's.
      if (!sndfile_magic(file_header()))
        throw NotSndfileFormat(ErrorKind::io, path_ + ": cannot open as audio: " + why);
      throw io_error(path_ + ": cannot open as audio: " + why);
    }
    format_ = sfinfo.format;
    info_.sample_rate = sfinfo.samplerate;
    info_.channels = sfinfo.channels;
    // FLAC/Ogg headers that do not give the length: read to the end.
    info_.frames = sfinfo.frames == SF_COUNT_MAX ? kUnknownFrames : sfinfo.frames;
    check_not_truncated([&] {
      // A placeholder size (a WAV written to a pipe and saved) is no damage:
      // libsndfile has already cut the length to what the file holds.
      return header_length_unknown(format_ & SF_FORMAT_TYPEMASK, file_header());
    });
  }

  // Standard input, a FIFO or another non-seekable file, or raw PCM: read
  // front to back through libsndfile's virtual I/O.
  void open_stream(bool is_stdin, const std::optional<RawSpec>& raw) {
    fd_.fd = is_stdin ? ::dup(STDIN_FILENO) : ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_.fd < 0)
      throw io_error(path_ + ": cannot read it: " + std::strerror(errno));
    const off_t stream_start = ::lseek(fd_.fd, 0, SEEK_CUR); // -1: a pipe
    stream_ = std::make_unique<ByteSource>(fd_.fd, is_stdin ? "standard input" : path_);
    SF_INFO sfinfo{};
    if (raw) {
      sfinfo.format = raw_sndfile_format(raw->encoding);
      sfinfo.channels = raw->channels;
      sfinfo.samplerate = static_cast<int>(raw->sample_rate);
      raw_frame_bytes_ = raw_frame_bytes(raw->encoding, raw->channels);
    }
    // libsndfile's Wave64 reader walks its chunks up to the file's length:
    // on a stream (a length of 2^60) a malformed one kept it in that loop
    // for ever (found by fuzz_audio; a stated length that the stream falls
    // short of spins as well). A Wave64 stream is read 64 KiB ahead: one
    // that ends within them is given its true length, a longer one the
    // length its header states (bytes 16-23: the whole file). Told by its
    // first four bytes, as libsndfile tells it (a mangled GUID after "riff"
    // still went to its Wave64 reader and spun: found by fuzz_audio again).
    static constexpr unsigned char kW64[] = {'r', 'i', 'f', 'f'};
    if (!raw && !stream_->has_length()) {
      constexpr std::int64_t kAhead = 65536;
      const std::vector<unsigned char>& head = stream_->peek(24);
      if (head.size() >= 24 && std::equal(std::begin(kW64), std::end(kW64), head.begin())) {
        std::uint64_t size = 0;
        for (int i = 7; i >= 0; --i)
          size = size << 8 | head[16 + static_cast<std::size_t>(i)];
        const auto got = static_cast<std::int64_t>(stream_->peek(kAhead).size());
        stream_->set_stated_length(got < kAhead ? got
                                                : static_cast<std::int64_t>(std::min<std::uint64_t>(
                                                      size, std::uint64_t{1} << 60)));
      }
    }
    // A CAF stream's header within libsndfile's bounds, and any stream's
    // walk of its header's chunks stopped should it go round (caf_guard.hpp).
    const bool caf = !raw && is_caf_stream(*stream_);
    if (caf)
      check_caf_stream(path_, *stream_);
    if (!raw)
      header_walk_.emplace(*stream_);
    file_.reset(sf_open_virtual(header_walk_ ? header_walk_->io() : stream_->io(), SFM_READ,
                                &sfinfo, header_walk_ ? header_walk_->user() : stream_->user()));
    stream_->rethrow_error();
    if (header_walk_)
      header_walk_->opened(path_, caf ? "CAF header" : "header");
    if (!file_) {
      const std::string why = sf_strerror(nullptr);
      if (stream_->position() == 0 && stream_->retained().empty())
        throw io_error(path_ + ": holds no audio frames (the stream is empty)");
      // Not a container libsndfile knows: FFmpeg reads the stream on, from
      // the bytes libsndfile has looked at (AAC in ADTS, WebM, an MP4 whose
      // index comes first, ...).
      if (!raw && !sndfile_magic(stream_->retained())) {
        // A seekable standard input (`< file`) goes back to where it began
        // (libsndfile moved it); a pipe gives FFmpeg the bytes read so far first.
        std::vector<unsigned char> head;
        if (stream_start < 0 || ::lseek(fd_.fd, stream_start, SEEK_SET) < 0)
          head = stream_->retained();
        throw NotSndfileStream(path_ + ": cannot read as audio: " + why, std::exchange(fd_.fd, -1),
                               std::move(head));
      }
      throw io_error(path_ + ": cannot read as audio: " + why +
                     " (a headerless stream needs --input-type raw --rate --channels --encoding)");
    }
    format_ = sfinfo.format;
    info_.sample_rate = sfinfo.samplerate;
    info_.channels = sfinfo.channels;
    const int major = format_ & SF_FORMAT_TYPEMASK;
    const bool placeholder = header_length_unknown(major, stream_->retained());
    if (placeholder && (major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX))
      reopen_wav_as_raw(sfinfo);
    const bool known =
        !raw && !placeholder && sfinfo.frames >= 0 && sfinfo.frames < kPlaceholderFrames;
    if (raw && stream_->has_length()) {
      // A raw file: its length is its size, which must be whole frames.
      const std::int64_t bytes = stream_->length();
      if (bytes % raw_frame_bytes_ != 0)
        throw io_error(path_ + ": the raw file ends inside frame " +
                       std::to_string(bytes / raw_frame_bytes_) + " (" +
                       std::to_string(bytes % raw_frame_bytes_) + " of its " +
                       std::to_string(raw_frame_bytes_) + " bytes; expected whole frames)");
      info_.frames = bytes / raw_frame_bytes_;
      raw_frame_bytes_ = 0;
    } else {
      info_.frames = known ? sfinfo.frames : kUnknownFrames;
    }
    // A pipe or standard input, whatever its header says (SPEC §6's stream).
    info_.open_ended = !stream_->has_length();
    if (known && stream_->has_length())
      check_not_truncated([] { return false; });
    stream_->release_header();
  }

  // libsndfile takes a WAV data size of 0 or 0xFFFFFFFF literally (no
  // samples; or a stop at 4 GiB, 6 hours of stereo 48 kHz). So the samples
  // of such a stream are reopened as raw PCM of the header's encoding, from
  // the data chunk on, and read until the stream ends. The header itself
  // was parsed by libsndfile; only the data offset is found by hand.
  void reopen_wav_as_raw(SF_INFO& sfinfo) {
    const std::int64_t offset = wav_data_offset(stream_->retained());
    SF_INFO r{};
    r.format = SF_FORMAT_RAW | (sfinfo.format & SF_FORMAT_SUBMASK) | SF_ENDIAN_LITTLE;
    r.channels = sfinfo.channels;
    r.samplerate = sfinfo.samplerate;
    if (offset < 0 || sf_format_check(&r) == 0)
      return; // e.g. ADPCM: libsndfile's own reading
    file_.reset();
    stream_->rebase(offset);
    file_.reset(sf_open_virtual(stream_->io(), SFM_READ, &r, stream_->user()));
    stream_->rethrow_error();
    if (!file_)
      throw io_error(path_ +
                     ": cannot read the samples of this WAV stream: " + sf_strerror(nullptr));
    reported_format_ = sfinfo.format;
    format_ = r.format;
    sfinfo.frames = r.frames;
  }

  // libsndfile quietly shortens a WAV/AIFF whose data chunk runs past the end
  // of the file; its parse log says so ("data : 80000 (should be 29956)").
  // A cut-off file is damage the user should hear about, not a shorter signal.
  template <typename IsPlaceholder>
  void check_not_truncated(IsPlaceholder&& header_is_placeholder) {
    std::string log(8192, '\0');
    sf_command(file_.get(), SFC_GET_LOG_INFO, log.data(), static_cast<int>(log.size()));
    std::size_t pos = 0;
    while (pos < log.size() && log[pos] != '\0') {
      const std::size_t end = log.find('\n', pos);
      const std::string line =
          log.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      if ((line.rfind("data", 0) == 0 || line.rfind("SSND", 0) == 0) &&
          line.find("should be") != std::string::npos && !header_is_placeholder())
        throw io_error(path_ +
                       ": truncated file: the audio data is shorter than its header says (" +
                       line.substr(0, line.find_last_not_of(" \r\0") + 1) + ")");
      if (end == std::string::npos)
        break;
      pos = end + 1;
    }
  }

  // Owns the descriptor a stream reads (from the constructor on: a header
  // that fails to parse closes it too).
  struct UniqueFd {
    int fd = -1;
    UniqueFd() = default;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() {
      if (fd >= 0)
        ::close(fd);
    }
  };

  std::string path_;
  UniqueFd fd_;
  std::unique_ptr<ByteSource> stream_;
  // A CAF stream's I/O as libsndfile uses it (caf_guard.hpp): after stream_, before file_.
  std::optional<StreamHeaderWalk> header_walk_;
  // Owned from sf_open on: a constructor that throws (a truncated file, a bad
  // header) closes it too.
  struct SfClose {
    void operator()(SNDFILE* f) const noexcept { sf_close(f); }
  };
  std::unique_ptr<SNDFILE, SfClose> file_;
  int format_ = 0;          // what libsndfile reads (raw PCM for a reopened WAV stream)
  int reported_format_ = 0; // what the input is (for names and `format: same`)
  SourceInfo info_;
  std::int64_t position_ = 0;
  bool ended_ = false;
  int raw_frame_bytes_ = 0; // a raw stream: checked for a partial last frame at its end
  bool raw_pcm16_ = false;  // see sndfile_is_native_pcm16
};

} // namespace

std::optional<AudioHeader> read_audio_header(const std::string& path) {
  SF_INFO info{};
  const std::unique_ptr<SNDFILE, int (*)(SNDFILE*)> f(sf_open(path.c_str(), SFM_READ, &info),
                                                      sf_close);
  if (!f || info.samplerate <= 0 || info.channels <= 0)
    return std::nullopt;
  AudioHeader h;
  h.sample_rate = info.samplerate;
  h.channels = info.channels;
  h.frames = info.frames == SF_COUNT_MAX ? 0 : info.frames;
  h.format = sndfile_format_name(info.format);
  return h;
}

std::unique_ptr<Source> open_audio_file(const std::string& path,
                                        const std::optional<RawSpec>& raw) {
  try {
    return std::make_unique<AudioFileSource>(path, raw);
  } catch (const NotSndfileFormat&) {
    // Said as it is, not as FFmpeg's "Invalid data" (and without its start).
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 &&
        !ec)
      throw io_error(path + ": empty file (0 bytes), not audio");
    // AAC/M4A, MP4, WebM, ...: FFmpeg decodes it (pipeline/io/ffmpeg_source.hpp).
    return open_ffmpeg_source(path);
  } catch (const NotSndfileStream& e) {
    return open_ffmpeg_stream(path, std::exchange(e.source->fd, -1), std::move(*e.head));
  }
}

namespace {

// A stream with its first frames read ahead: when it ends within them, its
// length is known before planning, so it is planned as the file of the same
// samples would be (the method rule and CUDA's block sizes look at lengths
// up to a chunk).
class PrefetchedSource final : public Source {
public:
  PrefetchedSource(std::unique_ptr<Source> inner, std::int64_t frames) : inner_(std::move(inner)) {
    info_ = inner_->info();
    ahead_ = make_host_block(info_.sample_type, info_.channels, frames);
    held_ = inner_->read(ahead_, 0, frames);
    if (held_ == 0)
      throw io_error(inner_->path() + ": holds no audio frames (the stream is empty)");
    if (held_ < frames)
      info_.frames = held_;
  }
  [[nodiscard]] const SourceInfo& info() const noexcept override { return info_; }
  [[nodiscard]] std::string path() const override { return inner_->path(); }
  [[nodiscard]] std::string format_name() const override { return inner_->format_name(); }
  [[nodiscard]] int sndfile_format() const noexcept override { return inner_->sndfile_format(); }
  [[nodiscard]] bool is_stream() const noexcept override { return inner_->is_stream(); }
  void cancel() noexcept override { inner_->cancel(); }
  std::int64_t read(HostBlock& block, std::int64_t at, std::int64_t n) override {
    std::int64_t k = 0;
    if (used_ < held_) {
      const auto frame_bytes = static_cast<std::int64_t>(info_.channels) *
                               static_cast<std::int64_t>(sample_bytes(info_.sample_type));
      k = std::min(n, held_ - used_);
      std::memcpy(block.data.get() + at * frame_bytes, ahead_.data.get() + used_ * frame_bytes,
                  static_cast<std::size_t>(k * frame_bytes));
      used_ += k;
      if (used_ == held_)
        ahead_ = HostBlock{}; // one chunk less held
    }
    if (k == n || info_.frames != kUnknownFrames)
      return k;
    return k + inner_->read(block, at + k, n - k);
  }

private:
  std::unique_ptr<Source> inner_;
  SourceInfo info_;
  HostBlock ahead_;
  std::int64_t held_ = 0, used_ = 0;
};

} // namespace

std::unique_ptr<Source> prefetch_stream(std::unique_ptr<Source> source, std::int64_t frames) {
  if (source->info().frames != kUnknownFrames)
    return source;
  return std::make_unique<PrefetchedSource>(std::move(source), frames);
}

std::unique_ptr<Source> open_source(const SourceSpec& spec) {
  if (spec.synth)
    return make_synth_source(*spec.synth);
  if (spec.file)
    return open_audio_file(*spec.file, spec.raw);
  throw config_error("source: expected one of 'file' or 'synth'");
}

} // namespace sigstream
