// Taps files (SPEC §2 `taps_file`): one coefficient per line, or (SPEC §11)
// an audio file whose channel c is the response of input channel c.
#include <sndfile.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "stages/design.hpp"
#include "stages/fir/fir.hpp"

namespace sigstream {

std::vector<double> read_taps_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw io_error(path + ": cannot open taps file (" + std::strerror(errno) + ")");
  return read_taps(in, path);
}

std::vector<double> read_taps(std::istream& in, const std::string& path) {
  std::vector<double> taps;
  // A line holds one number and a comment: a longer one is not a taps file
  // (and is not read into memory whole).
  constexpr std::streamsize kMaxLine = 4096;
  char buf[kMaxLine + 1];
  int line_no = 0;
  while (in.getline(buf, sizeof buf) || in.gcount() > 0) {
    ++line_no;
    if (in.fail() && !in.eof())
      throw config_error(path + ":" + std::to_string(line_no) + ": line longer than " +
                         std::to_string(kMaxLine) +
                         " characters (expected one coefficient per line)");
    std::string line(buf);
    if (const auto hash = line.find('#'); hash != std::string::npos)
      line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r,;");
    if (first != std::string::npos) {
      const auto last = line.find_last_not_of(" \t\r,;");
      const std::string text = line.substr(first, last - first + 1);
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || errno == ERANGE)
        throw config_error(path + ":" + std::to_string(line_no) + ": '" + text +
                           "' is not a number (expected one coefficient per line)");
      if (!std::isfinite(v))
        throw config_error(path + ":" + std::to_string(line_no) + ": coefficient '" + text +
                           "' is not finite");
      if (taps.size() == static_cast<std::size_t>(kMaxTaps))
        throw config_error(path + ":" + std::to_string(line_no) + ": more than " +
                           std::to_string(kMaxTaps) + " coefficients (the most a filter may have)");
      taps.push_back(v);
    }
    if (in.eof())
      break;
  }
  if (in.bad())
    throw io_error(path + ": read error");
  if (taps.empty())
    throw config_error(path + ": taps file holds no coefficients");
  return taps;
}

} // namespace sigstream

namespace sigstream {

namespace {

struct SndfileCloser {
  void operator()(SNDFILE* f) const noexcept { sf_close(f); }
};

// What the file's first bytes say it is: WAV (RIFF, RF64, Wave64), FLAC or
// AIFF, the containers an impulse response comes in; another audio magic
// (none of those is text); or neither (a text file of coefficients).
enum class TapsKind { text, audio, other_audio };

TapsKind taps_kind(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char m[4] = {};
  if (!in.read(m, 4))
    return TapsKind::text; // shorter than any audio header: text (or nothing)
  const std::string magic(m, 4);
  if (magic == "RIFF" || magic == "RF64" || magic == "riff" || magic == "fLaC" || magic == "FORM")
    return TapsKind::audio;
  if (magic == "caff" || magic == "OggS" || magic == ".snd" || magic.rfind("ID3", 0) == 0 ||
      (static_cast<unsigned char>(m[0]) == 0xff &&
       (static_cast<unsigned char>(m[1]) & 0xe0) == 0xe0))
    return TapsKind::other_audio;
  return TapsKind::text;
}

} // namespace

std::vector<std::vector<double>> read_channel_taps_file(const std::string& path) {
  const TapsKind kind = taps_kind(path);
  if (kind == TapsKind::text)
    return {read_taps_file(path)};
  if (kind == TapsKind::other_audio)
    throw config_error(path + ": a taps file in audio is WAV, FLAC or AIFF (this one is " +
                       "another container); or give one coefficient per line");
  SF_INFO info{};
  const std::unique_ptr<SNDFILE, SndfileCloser> f(sf_open(path.c_str(), SFM_READ, &info));
  if (!f)
    throw config_error(path + ": the taps file looks like WAV, FLAC or AIFF but does not open (" +
                       sf_strerror(nullptr) + ")");
  if (info.frames < 1 || info.channels < 1)
    throw config_error(path + ": the taps file (audio) holds no frames");
  if (info.frames > kMaxTaps)
    throw config_error(path + ": the taps file (audio) has " + std::to_string(info.frames) +
                       " frames; a filter has at most " + std::to_string(kMaxTaps) + " taps");
  const auto frames = static_cast<std::size_t>(info.frames);
  const auto channels = static_cast<std::size_t>(info.channels);
  std::vector<double> interleaved(frames * channels);
  if (sf_readf_double(f.get(), interleaved.data(), info.frames) != info.frames)
    throw io_error(path + ": read error in the taps file (" + sf_strerror(f.get()) + ")");
  std::vector<std::vector<double>> out(channels, std::vector<double>(frames));
  for (std::size_t i = 0; i < frames; ++i)
    for (std::size_t c = 0; c < channels; ++c) {
      const double v = interleaved[i * channels + c];
      if (!std::isfinite(v))
        throw config_error(path + ": frame " + std::to_string(i) + ", channel " +
                           std::to_string(c) + " of the taps file is not finite");
      out[c][i] = v;
    }
  return out;
}

} // namespace sigstream
