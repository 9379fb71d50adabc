#include <sndfile.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/error.hpp"
#include "pipeline/io/source.hpp"

namespace sigstream {

std::string sndfile_format_name(int format) {
  SF_FORMAT_INFO major{};
  major.format = format & SF_FORMAT_TYPEMASK;
  std::string name = "unknown";
  if (sf_command(nullptr, SFC_GET_FORMAT_INFO, &major, sizeof major) == 0 && major.extension)
    name = major.extension;
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8: return name + " pcm8";
    case SF_FORMAT_PCM_U8: return name + " pcm8u";
    case SF_FORMAT_PCM_16: return name + " pcm16";
    case SF_FORMAT_PCM_24: return name + " pcm24";
    case SF_FORMAT_PCM_32: return name + " pcm32";
    case SF_FORMAT_FLOAT: return name + " float";
    case SF_FORMAT_DOUBLE: return name + " double";
    default: break;
  }
  SF_FORMAT_INFO sub{};
  sub.format = format & SF_FORMAT_SUBMASK;
  std::string s = "unknown";
  if (sf_command(nullptr, SFC_GET_FORMAT_INFO, &sub, sizeof sub) == 0 && sub.name) s = sub.name;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return name + " " + s;
}

bool sndfile_is_native_pcm16(int format) noexcept {
  if constexpr (std::endian::native != std::endian::little) return false;
  const int major = format & SF_FORMAT_TYPEMASK;
  const bool little_container = major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX ||
                                major == SF_FORMAT_W64 || major == SF_FORMAT_RF64;
  const int endian = format & SF_FORMAT_ENDMASK;
  return little_container && (endian == SF_ENDIAN_FILE || endian == SF_ENDIAN_LITTLE) &&
         (format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_16;
}

namespace {

// The in-memory type and PCM width that carries a file's samples exactly.
void sample_type_of(int format, SampleType& type, int& bits) {
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8: type = SampleType::i16; bits = 8; return;
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW: type = SampleType::i16; bits = 16; return;
    case SF_FORMAT_PCM_24: type = SampleType::i32; bits = 24; return;
    case SF_FORMAT_PCM_32: type = SampleType::i32; bits = 32; return;
    default: type = SampleType::f32; bits = 0; return;
  }
}

class AudioFileSource final : public Source {
 public:
  explicit AudioFileSource(std::string path) : path_(std::move(path)) {
    SF_INFO sfinfo{};
    file_.reset(sf_open(path_.c_str(), SFM_READ, &sfinfo));
    if (!file_) {
      // libsndfile words system errors as "System error : ..."; say plainly
      // what is wrong when it is the file system, else pass its reason on.
      std::error_code ec;
      if (!std::filesystem::exists(path_, ec)) throw io_error(path_ + ": no such file");
      if (std::filesystem::is_directory(path_, ec))
        throw io_error(path_ + ": is a folder, expected an audio file");
      if (::access(path_.c_str(), R_OK) != 0)
        throw io_error(path_ + ": cannot read it: " + std::strerror(errno));
      throw io_error(path_ + ": cannot open as audio: " + sf_strerror(nullptr));
    }
    format_ = sfinfo.format;
    info_.sample_rate = sfinfo.samplerate;
    info_.channels = sfinfo.channels;
    info_.frames = sfinfo.frames;
    sample_type_of(format_, info_.sample_type, info_.bits);
    check_not_truncated();
    raw_pcm16_ = sndfile_is_native_pcm16(format_);
    if (info_.frames <= 0 || info_.frames == SF_COUNT_MAX)
      throw io_error(path_ + ": holds no audio frames (expected at least 1)");
    if (info_.channels < 1 || info_.sample_rate <= 0)
      throw io_error(path_ + ": bad header (channels " + std::to_string(info_.channels) +
                     ", rate " + std::to_string(sfinfo.samplerate) + ")");
  }
  AudioFileSource(const AudioFileSource&) = delete;
  AudioFileSource& operator=(const AudioFileSource&) = delete;

  [[nodiscard]] const SourceInfo& info() const noexcept override { return info_; }
  [[nodiscard]] std::string path() const override { return path_; }
  [[nodiscard]] std::string format_name() const override { return sndfile_format_name(format_); }

  // libsndfile quietly shortens a WAV/AIFF whose data chunk runs past the end
  // of the file; its parse log says so ("data : 80000 (should be 29956)").
  // A cut-off file is damage the user should hear about, not a shorter signal.
  void check_not_truncated() {
    std::string log(8192, '\0');
    sf_command(file_.get(), SFC_GET_LOG_INFO, log.data(), static_cast<int>(log.size()));
    std::size_t pos = 0;
    while (pos < log.size() && log[pos] != '\0') {
      const std::size_t end = log.find('\n', pos);
      const std::string line = log.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      if ((line.rfind("data", 0) == 0 || line.rfind("SSND", 0) == 0) &&
          line.find("should be") != std::string::npos)
        throw io_error(path_ + ": truncated file: the audio data is shorter than its header says (" +
                       line.substr(0, line.find_last_not_of(" \r\0") + 1) + ")");
      if (end == std::string::npos) break;
      pos = end + 1;
    }
  }
  [[nodiscard]] int sndfile_format() const noexcept override { return format_; }

  void read(HostBlock& block, std::int64_t at, std::int64_t n) override {
    const std::int64_t offset = at * block.channels;
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
      case SampleType::i32: got = sf_readf_int(file_.get(), block.as<int>() + offset, n); break;
      case SampleType::f32: got = sf_readf_float(file_.get(), block.as<float>() + offset, n); break;
    }
    if (got != n) {
      const std::string why = sf_error(file_.get()) != 0 ? sf_strerror(file_.get()) : "unexpected end of data";
      throw io_error(path_ + ": truncated or unreadable at frame " + std::to_string(position_ + got) +
                     " of " + std::to_string(info_.frames) + " (" + why + ")");
    }
    position_ += got;
  }

 private:
  std::string path_;
  // Owned from sf_open on: a constructor that throws (a truncated file, a bad
  // header) closes it too.
  struct SfClose {
    void operator()(SNDFILE* f) const noexcept { sf_close(f); }
  };
  std::unique_ptr<SNDFILE, SfClose> file_;
  int format_ = 0;
  SourceInfo info_;
  std::int64_t position_ = 0;
  bool raw_pcm16_ = false;  // see sndfile_is_native_pcm16
};

}  // namespace

std::unique_ptr<Source> open_audio_file(const std::string& path) {
  return std::make_unique<AudioFileSource>(path);
}

std::unique_ptr<Source> open_source(const SourceSpec& spec) {
  if (spec.synth) return make_synth_source(*spec.synth);
  if (spec.file) return open_audio_file(*spec.file);
  throw config_error("source: expected one of 'file' or 'synth'");
}

}  // namespace sigstream
