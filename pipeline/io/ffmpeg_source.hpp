#pragma once
// Files libsndfile does not read (AAC/M4A/MP4, WebM/Matroska, WMA, AMR, the
// audio of a video), decoded by the `ffmpeg` program (SPEC §14): sigstream
// runs it as a child process (`$SIGSTREAM_FFMPEG` where set, and then only
// that; else `ffmpeg` on PATH) and links none of FFmpeg's libraries (their
// Debian builds are GPL). The child writes the file's first audio stream as
// float32 WAV to a pipe (`-map 0:a:0 -c:a pcm_f32le -f wav`): the samples of
// `ffmpeg -i FILE -map 0:a:0 -f f32le -`, bit for bit, with the stream's rate
// and channels in the header. The length is what FFmpeg decodes (unknown
// until the end, like a FLAC whose header does not say).
//
// The child is stopped (SIGTERM) and reaped when the source goes, on every
// path; a read waits in poll() so that SIGINT/SIGTERM end a run whose child
// has stalled, and a second signal kills registered children before the
// process exits (core/cleanup.hpp). Its messages (standard error, kept in an
// unlinked temporary file so that it can never block on them) become part
// of sigstream's.
#include <memory>
#include <string>
#include <vector>

#include "pipeline/io/ffmpeg_child.hpp"
#include "pipeline/io/source.hpp"

namespace sigstream {

// Opens `path` through FFmpeg. Throws Error(io) naming the file: FFmpeg
// missing (with the install hint), or its reason for not decoding it.
[[nodiscard]] std::unique_ptr<Source> open_ffmpeg_source(const std::string& path);
// A stream (standard input, a FIFO: `path` names it in messages): FFmpeg
// reads it from its standard input, which a thread of ours feeds with
// `head` (what was read of it already) and then what `fd` gives (owned
// here). Where FFmpeg cannot read the container from a pipe (an MP4 whose
// index comes last), its reason.
[[nodiscard]] std::unique_ptr<Source> open_ffmpeg_stream(const std::string& path, int fd,
                                                         std::vector<unsigned char> head);

} // namespace sigstream
