#include "pipeline/io/audio_sink.hpp"

#include <sndfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "pipeline/io/byte_stream.hpp"
#include "pipeline/io/ffmpeg_child.hpp"
#include "pipeline/io/source.hpp"

namespace sigstream {

namespace {

int major_of(SinkType t) {
  switch (t) {
    case SinkType::wav:
      return SF_FORMAT_WAV;
    case SinkType::raw:
      return SF_FORMAT_RAW;
    case SinkType::au:
      return SF_FORMAT_AU;
    case SinkType::flac:
      return SF_FORMAT_FLAC;
    case SinkType::caf:
      return SF_FORMAT_CAF;
  }
  return SF_FORMAT_WAV;
}

// The file's extension, lower case, without the dot.
std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (!ext.empty())
    ext.erase(0, 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext;
}

int major_from_extension(const std::string& path) {
  if (is_std_stream(path))
    throw config_error(
        "sink.file '-' (standard output) needs its container: --type wav|raw|au|flac|caf "
        "(YAML: sink.type)");
  const std::string ext = extension_of(path);
  if (ext == "aif" || ext == "aifc")
    return SF_FORMAT_AIFF;
  if (ext == "pcm")
    return SF_FORMAT_RAW;
  if (ext == "oga" || ext == "ogg" || ext == "opus")
    return SF_FORMAT_OGG;
  if (ext == "mp3")
    return SF_FORMAT_MPEG; // libsndfile >= 1.1 lists MPEG as "m1a"
  if (ext == "wave")
    return SF_FORMAT_WAV;
  int count = 0;
  sf_command(nullptr, SFC_GET_FORMAT_MAJOR_COUNT, &count, sizeof count);
  std::set<std::string> known{"aif", "aifc", "mp3", "oga",
                              "ogg", "opus", "pcm", "wave"}; // several formats share one
  for (int i = 0; i < count; ++i) {
    SF_FORMAT_INFO info{};
    info.format = i;
    sf_command(nullptr, SFC_GET_FORMAT_MAJOR, &info, sizeof info);
    if (info.extension != nullptr && ext == info.extension)
      return info.format;
    if (info.extension != nullptr)
      known.insert(info.extension);
  }
  std::string list;
  for (const std::string& e : known)
    list += (list.empty() ? "" : ", ") + e;
  throw config_error("sink.file '" + path + "': unknown audio extension '" + ext +
                     "' (expected one of: " + list + ")");
}

// Codecs that drop information: decoding one gives samples no PCM width
// holds exactly, so `same` does not carry them into another container.
bool lossy(int subtype) {
  switch (subtype) {
    case SF_FORMAT_VORBIS:
    case SF_FORMAT_OPUS:
    case SF_FORMAT_MPEG_LAYER_I:
    case SF_FORMAT_MPEG_LAYER_II:
    case SF_FORMAT_MPEG_LAYER_III:
    case SF_FORMAT_GSM610:
    case SF_FORMAT_G721_32:
    case SF_FORMAT_G723_24:
    case SF_FORMAT_G723_40:
    case SF_FORMAT_IMA_ADPCM:
    case SF_FORMAT_MS_ADPCM:
    case SF_FORMAT_VOX_ADPCM:
    case SF_FORMAT_NMS_ADPCM_16:
    case SF_FORMAT_NMS_ADPCM_24:
    case SF_FORMAT_NMS_ADPCM_32:
      return true;
    default:
      return false;
  }
}

// Encoders that take a quality (sink.quality).
bool takes_quality(int subtype) {
  return subtype == SF_FORMAT_MPEG_LAYER_III || subtype == SF_FORMAT_VORBIS ||
         subtype == SF_FORMAT_OPUS;
}

// The PCM bits samples are quantized to before the sink, 0 = float. Lossy
// encoders get full-scale samples, clipped (and NaN as 0) and counted like
// PCM's: LAME aborts the process on values far beyond full scale. 24 bits
// keeps every bit their float input could use.
int bits_of(int subtype) {
  if (lossy(subtype))
    return 24;
  switch (subtype) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
      return 8;
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW:
      return 16;
    case SF_FORMAT_PCM_24:
      return 24;
    case SF_FORMAT_PCM_32:
      return 32;
    default:
      return 0;
  }
}

std::string container_name(int major) {
  const std::string name = sndfile_format_name(major | SF_FORMAT_PCM_16);
  return name.substr(0, name.find(' '));
}

bool valid(int format) {
  SF_INFO info{};
  info.format = format;
  info.channels = 1;
  info.samplerate = 48000;
  return sf_format_check(&info) != 0;
}

} // namespace

void check_sink_channels(const std::string& path, const SinkFormat& format, int channels) {
  SF_INFO info{};
  info.format = format.sndfile_format;
  info.channels = channels;
  info.samplerate = 48000;
  if (sf_format_check(&info) != 0)
    return;
  // The most it takes, for the message (libsndfile does not say).
  int most = 0;
  for (int c = channels - 1; c >= 1 && most == 0; --c) {
    info.channels = c;
    if (sf_format_check(&info) != 0)
      most = c;
  }
  throw config_error("sink.file " + path + ": " + format.name + " cannot hold " +
                     std::to_string(channels) + " channels (the output's, after the stages)" +
                     (most > 0 ? "; it holds at most " + std::to_string(most) : std::string()));
}

bool compresses(const SinkFormat& format) {
  if (!format.ffmpeg_muxer.empty())
    return true;
  const int major = format.sndfile_format & SF_FORMAT_TYPEMASK;
  if (major == SF_FORMAT_FLAC || major == SF_FORMAT_OGG || major == SF_FORMAT_MPEG)
    return true;
  switch (format.sndfile_format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_PCM_24:
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_FLOAT:
    case SF_FORMAT_DOUBLE:
      return false;
    default:
      return true;
  }
}

SinkFormat choose_sink_format(const std::string& path, SampleFormat requested, int source_format,
                              std::optional<SinkType> type, std::optional<double> quality) {
  // AAC in MP4 (.m4a, .m4b, .mp4): FFmpeg encodes it from 24-bit samples.
  if (const std::string ext = extension_of(path);
      !type && (ext == "m4a" || ext == "m4b" || ext == "mp4")) {
    if (requested != SampleFormat::same)
      throw config_error("sink.format '" + std::string(to_string(requested)) + "': " + path +
                         " is AAC, encoded by FFmpeg (leave the format out; sink.quality sets "
                         "its bit rate)");
    SinkFormat out;
    out.sndfile_format = SF_FORMAT_WAV | SF_FORMAT_PCM_24;
    out.bits = 24;
    out.ffmpeg_muxer = ext == "mp4" ? "mp4" : "ipod";
    // sink.quality 0 .. 1: 64 .. 320 kb/s.
    if (quality)
      out.ffmpeg_kbps = static_cast<int>(std::lround(64.0 + 256.0 * *quality));
    out.name = ext + " aac via ffmpeg" +
               (quality ? " " + std::to_string(out.ffmpeg_kbps) + " kb/s" : std::string());
    return out;
  }
  const int major = type ? major_of(*type) : major_from_extension(path);
  SinkFormat out;
  int subtype = 0;
  switch (requested) {
    case SampleFormat::pcm16:
      subtype = SF_FORMAT_PCM_16;
      break;
    case SampleFormat::pcm24:
      subtype = SF_FORMAT_PCM_24;
      break;
    case SampleFormat::pcm32:
      subtype = SF_FORMAT_PCM_32;
      break;
    case SampleFormat::float32:
      subtype = SF_FORMAT_FLOAT;
      break;
    case SampleFormat::float64:
      subtype = SF_FORMAT_DOUBLE;
      break;
    case SampleFormat::same:
      break;
  }
  if (subtype != 0) {
    if (!valid(major | subtype))
      throw config_error("sink.format '" + std::string(to_string(requested)) +
                         "' cannot be written to a " + container_name(major) + " file (" + path +
                         "); choose another format or extension");
  } else {
    // `same`: the source's subtype if the container takes it, else the most
    // precise one it does take. From a lossy source (MP3, Vorbis, Opus,
    // ADPCM, ...): float, or the most precise PCM the container holds; its
    // own codec only into that codec's container (MP3 -> .mp3, Vorbis -> .ogg),
    // which holds nothing else. (libsndfile accepts WAV + MPEG layer III as a
    // format and then cannot write it.)
    const int source_subtype = source_format & SF_FORMAT_SUBMASK;
    const bool from_lossy = source_format != 0 && lossy(source_subtype);
    int wanted = source_format == 0 || (from_lossy && (source_format & SF_FORMAT_TYPEMASK) != major)
                     ? SF_FORMAT_FLOAT
                     : source_subtype;
    // An Ogg container holds Vorbis or Opus: .opus asks for Opus.
    const int ogg_codec = extension_of(path) == "opus" ? SF_FORMAT_OPUS : SF_FORMAT_VORBIS;
    if (wanted == SF_FORMAT_VORBIS || wanted == SF_FORMAT_OPUS)
      wanted = ogg_codec;
    for (int candidate : {wanted, static_cast<int>(SF_FORMAT_FLOAT),
                          static_cast<int>(SF_FORMAT_PCM_24), static_cast<int>(SF_FORMAT_PCM_16),
                          ogg_codec, static_cast<int>(SF_FORMAT_MPEG_LAYER_III)}) {
      if (valid(major | candidate)) {
        subtype = candidate;
        break;
      }
    }
    if (subtype == 0)
      throw config_error("sink.file '" + path + "': no sample format fits this container");
    if (subtype != (source_format != 0 ? source_subtype : SF_FORMAT_FLOAT))
      out.note = "sink format 'same' (" + sndfile_format_name(source_format) + ")" +
                 (from_lossy ? " is lossy" : " does not fit " + path) + "; writing " +
                 sndfile_format_name(major | subtype);
  }
  out.sndfile_format = major | subtype;
  // Raw samples are little-endian (s16le, f32le, ...), whatever the machine.
  if (major == SF_FORMAT_RAW)
    out.sndfile_format |= SF_ENDIAN_LITTLE;
  out.bits = bits_of(subtype);
  out.name = sndfile_format_name(out.sndfile_format);
  if (quality) {
    if (!takes_quality(subtype))
      throw config_error("sink.quality applies to MP3, Vorbis and Opus outputs; " + path + " is " +
                         out.name + " (leave quality out, or write .mp3, .ogg or .opus)");
    // libsndfile's MP3 encoder refuses level 1.0 exactly: the smallest setting is 0.99.
    out.compression_level = std::min(1.0 - *quality, 0.99);
  }
  return out;
}

AudioSink::AudioSink(const std::string& path, const SinkFormat& format, double sample_rate,
                     int channels) {
  SF_INFO info{};
  info.format = format.sndfile_format;
  info.channels = channels;
  info.samplerate = static_cast<int>(sample_rate);
  SNDFILE* f = nullptr;
  struct stat st {};
  if (is_std_stream(path) && ::fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
    // `> file`: standard output can seek, so the header gets its true sizes.
    f = sf_open_fd(STDOUT_FILENO, SFM_WRITE, &info, SF_FALSE);
  } else if (is_std_stream(path)) {
    stream_ = std::make_unique<ByteSink>(STDOUT_FILENO, "standard output",
                                         format.sndfile_format & SF_FORMAT_TYPEMASK);
    f = sf_open_virtual(stream_->io(), SFM_WRITE, &info, stream_->user());
  } else if (!format.ffmpeg_muxer.empty()) {
    // FFmpeg writes the temporary file (its fd 3, reopened: the MP4 muxer
    // seeks) from the WAV stream we pipe to it; commit() waits for it.
    file_.emplace(path);
    std::vector<std::string> args = {"-hide_banner", "-nostats", "-loglevel", "level+error", "-f",
                                     "wav",          "-i",       "pipe:0",    "-c:a",        "aac"};
    if (format.ffmpeg_kbps > 0)
      args.insert(args.end(), {"-b:a", std::to_string(format.ffmpeg_kbps) + "k"});
    args.insert(args.end(), {"-f", format.ffmpeg_muxer, "-y", "file:/proc/self/fd/3"});
    encoder_ = std::make_unique<FfmpegChild>(
        args, path, FfmpegChild::Wiring{.we_write_stdin = true, .fd3 = file_->fd()});
    stream_ = std::make_unique<ByteSink>(encoder_->in(), path + " (ffmpeg's input)",
                                         format.sndfile_format & SF_FORMAT_TYPEMASK);
    f = sf_open_virtual(stream_->io(), SFM_WRITE, &info, stream_->user());
  } else {
    file_.emplace(path);
    f = sf_open_fd(file_->fd(), SFM_WRITE, &info, SF_FALSE);
  }
  if (f == nullptr)
    throw io_error(name() + ": cannot write " + format.name + ": " + sf_strerror(nullptr));
  sndfile_ = reinterpret_cast<sf_private_tag*>(f);
  // Float sinks: keep samples as they are (no normalisation, no clipping).
  sf_command(f, SFC_SET_CLIPPING, nullptr, SF_FALSE);
  // The PEAK chunk carries a time stamp: without it, the same run writes the same bytes.
  sf_command(f, SFC_SET_ADD_PEAK_CHUNK, nullptr, SF_FALSE);
  if (format.compression_level) {
    double level = *format.compression_level;
    if (sf_command(f, SFC_SET_COMPRESSION_LEVEL, &level, sizeof level) != SF_TRUE) {
      sf_close(f);
      sndfile_ = nullptr;
      throw io_error(name() + ": libsndfile refused the quality setting for " + format.name);
    }
  }
  raw_pcm16_ = sndfile_is_native_pcm16(format.sndfile_format);
}

AudioSink::~AudioSink() {
  if (sndfile_ != nullptr)
    sf_close(reinterpret_cast<SNDFILE*>(sndfile_));
}

std::string AudioSink::name() const {
  return file_ ? file_->path() : std::string("standard output");
}

void AudioSink::write(const HostBlock& block) {
  auto* f = reinterpret_cast<SNDFILE*>(sndfile_);
  sf_count_t put = 0;
  switch (block.type) {
    case SampleType::i16:
      if (raw_pcm16_) {
        const sf_count_t frame_bytes = 2 * static_cast<sf_count_t>(block.channels);
        put = sf_write_raw(f, block.as<short>(), block.frames * frame_bytes) / frame_bytes;
      } else {
        put = sf_writef_short(f, block.as<short>(), block.frames);
      }
      break;
    case SampleType::i32:
      put = sf_writef_int(f, block.as<int>(), block.frames);
      break;
    case SampleType::f32:
      put = sf_writef_float(f, block.as<float>(), block.frames);
      break;
  }
  if (stream_) {
    try {
      stream_->release(); // the header, then every block as it comes
    } catch (const Error& e) {
      if (!encoder_ || e.kind() != ErrorKind::output_closed)
        throw;
      encoder_failed(); // FFmpeg went away: its reason, not a quiet stop
    }
  }
  if (put != block.frames && encoder_)
    encoder_failed();
  if (put != block.frames)
    throw io_error(name() + ": write failed after " + std::to_string(frames_ + put) +
                   " frames: " + sf_strerror(f));
  frames_ += put;
}

void AudioSink::finish() {
  if (finished_)
    return;
  auto* f = reinterpret_cast<SNDFILE*>(sndfile_);
  // No fsync: like SoX and FFmpeg, the data reaches the disk when the kernel
  // writes it back (flushing a 100 MB output here took longer than reading and
  // writing it). Atomicity does not need it: the rename happens only after a
  // complete file, so a failed or interrupted run never leaves a partial one.
  const int rc = sf_close(f);
  sndfile_ = nullptr;
  finished_ = true;
  if (encoder_) {
    try {
      stream_->release();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::output_closed)
        throw;
    }
    // The end of its input: it finishes the file (the MP4 index) and exits.
    encoder_->close_in();
    const int status = encoder_->wait();
    throw_if_interrupted();
    if (rc != 0)
      throw io_error(name() + ": cannot finish the stream to ffmpeg: " + sf_error_number(rc));
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      throw io_error(name() + ": ffmpeg could not encode it (" +
                     ffmpeg_failure(status, encoder_->messages()) + ")");
    return;
  }
  if (stream_) {
    stream_->release(); // an output of no frames: its header
    return;
  }
  if (rc != 0)
    throw io_error(name() + ": cannot finish the file: " + sf_error_number(rc));
}

void AudioSink::encoder_failed() {
  // libsndfile writes no more (the descriptor is about to close): later
  // writes fail in the stream, never reach a number another file may hold.
  stream_->cancel();
  const int status = encoder_->wait();
  throw_if_interrupted(); // a Ctrl-C that reached FFmpeg too: an interruption
  throw io_error(name() + ": ffmpeg stopped encoding after " + std::to_string(frames_) +
                 " frames (" + ffmpeg_failure(status, encoder_->messages()) + ")");
}

void AudioSink::commit() {
  finish();
  if (file_)
    file_->commit();
}

} // namespace sigstream
