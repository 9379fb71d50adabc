// `sigstream batch` (pipeline/batch.hpp): input expansion and mirrored output
// names, per-file statistics, the summary, keep_going, resume, and the
// scheduler's device assignment with an injected device count (no GPU needed).
// Over 600 lines (~1530): the scheduler, resume and exactly-once tests share
// the fixture that writes inputs and a config and the injected runners; the
// exactly-once completion tests are the part to move to a file of their own
// (with the fixture in tests/support) when this grows again.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sndfile.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/batch_summary_json.hpp"
#include "pipeline/config.hpp"
#include "pipeline/io/atomic_file.hpp"
#include "pipeline/io/stats_writer.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/plan.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::TempDir;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// Every file under `dir`, as paths relative to it (sorted).
std::vector<std::string> tree(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir))
    return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      out.push_back(e.path().lexically_relative(dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

bool has_temp_files(const fs::path& dir) {
  for (const auto& f : tree(dir))
    if (f.find(".sigstream-") != std::string::npos)
      return true;
  return false;
}

struct Fixture {
  std::string name; // relative to in/
  int format, rate, channels;
  double seconds;
};

// Mixed rates, channel counts and formats, in a tree with a subfolder.
const std::vector<Fixture> kFixtures = {
    {"a_mono8k.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 8000, 1, 0.9},
    {"b_stereo44.wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 2, 0.3},
    {"sub/c_three48.flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_24, 48000, 3, 0.25},
    {"sub/d_stereo48.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 2, 0.2},
};

// The good fixtures' outputs (relative to out/), in input order.
const std::vector<std::string> kOutputs = {"a_mono8k.wav", "b_stereo44.wav", "sub/c_three48.wav",
                                           "sub/d_stereo48.wav"};

class Batch : public ::testing::Test {
protected:
  void SetUp() override {
    std::uint32_t seed = 1;
    for (const Fixture& f : kFixtures) {
      const fs::path p = in() / f.name;
      fs::create_directories(p.parent_path());
      const int bits = (f.format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_16   ? 16
                       : (f.format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_24 ? 24
                                                                            : 0;
      const auto frames = static_cast<std::size_t>(f.seconds * f.rate);
      test::write_audio(
          p.string(), f.format, f.rate, f.channels,
          test::random_samples(frames * static_cast<std::size_t>(f.channels), seed++, 0.5f, bits));
    }
    write_text(in() / "bad.wav", "this is not audio, only text with a .wav name\n");
    write_text(in() / "notes.txt", "not taken: a folder walk takes audio extensions only\n");
  }

  [[nodiscard]] fs::path in() const { return dir_.path() / "in"; }
  [[nodiscard]] fs::path out() const { return dir_.path() / "out"; }

  [[nodiscard]] std::string yaml(const std::string& inputs, bool keep_going = true, int threads = 2,
                                 const std::string& extra_stage = "") const {
    return "version: 1\n"
           "source: {file: placeholder.wav}\n"
           "stages:\n"
           "  - type: fir\n"
           "    name: lp\n"
           "    design: {kind: lowpass, cutoff_hz: 1000, taps: 31, window: hamming}\n"
           "  - type: metrics\n"
           "    name: after_lp\n" +
           extra_stage +
           "sink: {file: placeholder.wav, format: same}\n"
           "stats: {json: placeholder.json, csv: placeholder.csv}\n"
           "execution: {backend: cpu, chunk_frames: 4096, threads: " +
           std::to_string(threads) +
           "}\n"
           "batch:\n"
           "  inputs: " +
           inputs + "\n  out_dir: " + out().string() +
           "\n  keep_going: " + (keep_going ? "true" : "false") + "\n";
  }

  [[nodiscard]] Config config(const std::string& inputs, bool keep_going = true, int threads = 2,
                              const std::string& extra_stage = "") const {
    return parse_config(yaml(inputs, keep_going, threads, extra_stage), "batch-test.yaml");
  }

  [[nodiscard]] Config tree_config(bool keep_going = true, int threads = 2) const {
    return config("[\"" + in().string() + "\"]", keep_going, threads);
  }

  static BatchOptions quiet_options() {
    BatchOptions o;
    o.quiet = true;
    return o;
  }

  TempDir dir_;
};

TEST_F(Batch, TreeOfMixedFilesGivesMirroredOutputsStatsAndSummary) {
  std::vector<std::string> lines;
  BatchOptions o;
  o.log = [&](const std::string& m) { lines.push_back(m); };
  const BatchSummary s = run_batch(tree_config(), o);

  EXPECT_EQ(s.exit_code(), 1); // the corrupt file failed
  EXPECT_EQ(s.ok, 4);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.skipped, 0);
  EXPECT_FALSE(s.interrupted);
  EXPECT_EQ(s.backend, "cpu");
  ASSERT_EQ(s.files.size(), 5U); // notes.txt is not audio: not taken

  for (std::size_t i = 0; i < kFixtures.size(); ++i) {
    const Fixture& f = kFixtures[i];
    const fs::path output = out() / kOutputs[i];
    ASSERT_TRUE(fs::exists(output)) << output;
    const test::Audio a = test::read_audio(output.string());
    EXPECT_EQ(a.rate, f.rate) << output;
    EXPECT_EQ(a.channels, f.channels) << output;
    EXPECT_EQ(a.frames, static_cast<std::int64_t>(f.seconds * f.rate)) << output;
    EXPECT_EQ(a.format & SF_FORMAT_TYPEMASK, SF_FORMAT_WAV)
        << "the sink's extension sets the container";
    EXPECT_EQ(a.format & SF_FORMAT_SUBMASK, f.format & SF_FORMAT_SUBMASK)
        << "format: same keeps the subtype";

    // Statistics next to the output, naming this input.
    fs::path js = output, cs = output;
    js.replace_extension(".json");
    cs.replace_extension(".csv");
    ASSERT_TRUE(fs::exists(js)) << js;
    ASSERT_TRUE(fs::exists(cs)) << cs;
    const json stats = json::parse(read_bytes(js));
    EXPECT_EQ(fs::path(stats["input"]["path"].get<std::string>()), in() / f.name);
    EXPECT_EQ(stats["input"]["channels"], f.channels);
    EXPECT_EQ(read_bytes(cs).rfind("stage,chunk,start_frame", 0), 0U);

    // Exactly what a single run of the same config gives.
    Config single = tree_config();
    single.source.file = (in() / f.name).string();
    single.sink.file = (dir_.path() / ("single_" + std::to_string(i) + ".wav")).string();
    single.stats = {};
    RunOptions ro;
    (void)run_pipeline(single, ro);
    EXPECT_EQ(read_bytes(output), read_bytes(*single.sink.file)) << output;
  }
  EXPECT_FALSE(fs::exists(out() / "bad.wav"));
  EXPECT_FALSE(fs::exists(out() / "bad.json"));
  EXPECT_FALSE(has_temp_files(out()));

  // The summary, JSON.
  ASSERT_TRUE(s.summary_written);
  EXPECT_EQ(fs::path(s.summary_json), out() / "batch_summary.json");
  const json j = json::parse(read_bytes(out() / "batch_summary.json"));
  EXPECT_EQ(j["counts"]["total"], 5);
  EXPECT_EQ(j["counts"]["ok"], 4);
  EXPECT_EQ(j["counts"]["failed"], 1);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["backend"], "cpu");
  ASSERT_EQ(j["files"].size(), 5U);
  std::map<std::string, json> by_name;
  for (const json& e : j["files"])
    by_name[fs::path(e["file"].get<std::string>()).filename().string()] = e;
  const json& bad = by_name.at("bad.wav");
  EXPECT_EQ(bad["status"], "failed");
  ASSERT_TRUE(bad["error"].is_string());
  EXPECT_NE(bad["error"].get<std::string>().find("bad.wav"), std::string::npos) << bad["error"];
  EXPECT_TRUE(bad["frames"].is_null());
  const json& c3 = by_name.at("c_three48.flac");
  EXPECT_EQ(c3["status"], "ok");
  EXPECT_TRUE(c3["error"].is_null());
  EXPECT_EQ(c3["channels"], 3);
  EXPECT_EQ(c3["sample_rate"], 48000.0);
  EXPECT_EQ(c3["frames"], 12000);
  EXPECT_NEAR(c3["duration_s"].get<double>(), 0.25, 1e-12);
  EXPECT_EQ(fs::path(c3["output"].get<std::string>()), out() / "sub/c_three48.wav");
  EXPECT_EQ(c3["output_rms"].size(), 3U);
  EXPECT_EQ(c3["output_peak"].size(), 3U);
  EXPECT_GT(c3["output_rms"][0].get<double>(), 0.0);
  EXPECT_GT(c3["wall_s"].get<double>(), 0.0);
  EXPECT_GT(c3["frames_per_s"].get<double>(), 0.0);
  EXPECT_EQ(c3["clipped_samples"], 0);
  ASSERT_EQ(j["devices"].size(), 1U);
  EXPECT_EQ(j["devices"][0]["device"], "cpu");
  EXPECT_EQ(j["devices"][0]["files"], 5);

  // The summary, CSV: a header and one row per file, the error message included.
  std::istringstream csv(read_bytes(out() / "batch_summary.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header,
            "file,output,status,frames,duration_s,sample_rate,channels,wall_s,frames_per_s,device,"
            "clipped_samples,output_rms,output_peak,integrated_lufs,true_peak_dbtp,error");
  std::vector<std::string> rows;
  for (std::string l; std::getline(csv, l);)
    rows.push_back(l);
  ASSERT_EQ(rows.size(), 5U);
  int failed_rows = 0;
  for (const auto& r : rows) {
    if (r.find(",failed,") != std::string::npos) {
      ++failed_rows;
      EXPECT_NE(r.find("bad.wav"), std::string::npos);
    } else {
      EXPECT_NE(r.find(",ok,"), std::string::npos) << r;
    }
  }
  EXPECT_EQ(failed_rows, 1);

  // The failure was logged with its file.
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("failed") != std::string::npos && l.find("bad.wav") != std::string::npos;
  }));
}

TEST_F(Batch, WithoutKeepGoingTheFirstFailureStopsTheBatchAndLeavesNoPartialFile) {
  // The corrupt file is the largest, so it is handed out first (largest first),
  // and with one worker nothing else starts.
  write_text(in() / "bad.wav", std::string(400000, 'x'));
  const BatchSummary s =
      run_batch(tree_config(/*keep_going=*/false, /*threads=*/1), quiet_options());
  EXPECT_EQ(s.exit_code(), 1);
  EXPECT_TRUE(s.stopped);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.ok, 0);
  EXPECT_EQ(s.not_run, 4);
  EXPECT_EQ(tree(out()), (std::vector<std::string>{"batch_summary.csv", "batch_summary.json"}));
  const json j = json::parse(read_bytes(out() / "batch_summary.json"));
  EXPECT_EQ(j["stopped_at_failure"], true);
  EXPECT_EQ(j["counts"]["not_run"], 4);
}

TEST_F(Batch, KeepGoingFromOptionsOverridesTheConfig) {
  write_text(in() / "bad.wav", std::string(400000, 'x'));
  BatchOptions o = quiet_options();
  o.keep_going = true;
  const BatchSummary s = run_batch(tree_config(/*keep_going=*/false, 1), o);
  EXPECT_EQ(s.ok, 4);
  EXPECT_EQ(s.failed, 1);
  EXPECT_FALSE(s.stopped);
}

TEST_F(Batch, ResumeSkipsCompleteFilesAndForceRedoesThem) {
  const Config cfg = tree_config();
  const fs::path config_file = dir_.path() / "batch.yaml";
  write_text(config_file, yaml("[\"" + in().string() + "\"]"));
  BatchOptions o = quiet_options();
  o.config_path = config_file.string();
  ASSERT_EQ(run_batch(cfg, o).ok, 4);

  std::map<std::string, fs::file_time_type> times;
  std::map<std::string, std::string> bytes;
  for (const auto& f : tree(out())) {
    times[f] = fs::last_write_time(out() / f);
    bytes[f] = read_bytes(out() / f);
  }

  // Again: everything complete is skipped and not touched; the bad file fails again.
  BatchSummary again = run_batch(cfg, o);
  EXPECT_EQ(again.skipped, 4);
  EXPECT_EQ(again.ok, 0);
  EXPECT_EQ(again.failed, 1);
  for (const auto& f : tree(out())) {
    if (f.rfind("batch_summary", 0) == 0)
      continue;
    EXPECT_EQ(fs::last_write_time(out() / f), times.at(f)) << f << " was rewritten";
  }
  // Skipped files still carry their numbers in the summary (from their statistics).
  for (const BatchFileResult& r : again.files) {
    if (r.status != BatchStatus::skipped)
      continue;
    EXPECT_GT(r.frames, 0) << r.item.input;
    EXPECT_FALSE(r.output_rms.empty()) << r.item.input;
  }

  // A missing statistics file (as after a kill between the audio and its JSON),
  // and an input newer than its output: both redone, the rest skipped.
  fs::remove(out() / "sub/c_three48.json");
  fs::last_write_time(in() / "a_mono8k.wav",
                      fs::file_time_type::clock::now() + std::chrono::hours(1));
  again = run_batch(cfg, o);
  EXPECT_EQ(again.ok, 2);
  EXPECT_EQ(again.skipped, 2);
  for (const BatchFileResult& r : again.files) {
    const std::string name = fs::path(r.item.input).filename().string();
    if (name == "a_mono8k.wav" || name == "c_three48.flac") {
      EXPECT_EQ(r.status, BatchStatus::ok) << name;
    }
  }
  EXPECT_TRUE(fs::exists(out() / "sub/c_three48.json"));
  for (const auto& f : kOutputs)
    EXPECT_EQ(read_bytes(out() / f), bytes.at(f)) << f;

  // A config file newer than the outputs: everything redone.
  fs::last_write_time(config_file, fs::file_time_type::clock::now() + std::chrono::hours(2));
  EXPECT_EQ(run_batch(cfg, o).ok, 4);

  // --force redoes everything, with the same bytes.
  fs::last_write_time(config_file, fs::last_write_time(in() / "b_stereo44.wav"));
  fs::last_write_time(in() / "a_mono8k.wav", fs::last_write_time(in() / "b_stereo44.wav"));
  EXPECT_EQ(run_batch(cfg, o).skipped, 4);
  o.force = true;
  const BatchSummary forced = run_batch(cfg, o);
  EXPECT_EQ(forced.ok, 4);
  EXPECT_EQ(forced.skipped, 0);
  for (const auto& f : kOutputs)
    EXPECT_EQ(read_bytes(out() / f), bytes.at(f)) << f;
}

// Names that are not UTF-8 (Latin-1 files from an old archive): each file is
// processed, its statistics and the summary name it with U+FFFD for the odd
// byte (JSON text is UTF-8; the strict dump had failed the file and the
// summary with an internal error), and a second run finds them up to date:
// two names that read alike there (caf\xe9, caf\xe8) each by its own record.
TEST_F(Batch, NamesThatAreNotUtf8AreProcessedNamedAndResumed) {
  const std::string e_acute = "caf\xe9.wav", e_grave = "caf\xe8.wav";
  fs::rename(in() / "a_mono8k.wav", in() / e_acute);
  fs::rename(in() / "b_stereo44.wav", in() / e_grave);
  fs::remove(in() / "bad.wav");
  const Config cfg = tree_config();
  const BatchSummary first = run_batch(cfg, quiet_options());
  EXPECT_EQ(first.ok, 4);
  EXPECT_EQ(first.failed, 0);
  const json summary = json::parse(read_bytes(out() / "batch_summary.json"));
  std::set<std::string> named;
  for (const json& f : summary["files"])
    named.insert(fs::path(f["file"].get<std::string>()).filename().string());
  EXPECT_TRUE(named.count("caf\u00ef\u00bf\u00bd.wav") == 0); // not mojibake of U+FFFD
  EXPECT_EQ(named.count("caf\xef\xbf\xbd.wav"), 1U) << "the two names read alike: one entry name";
  const json stats = json::parse(read_bytes(out() / "caf\xe9.json"));
  EXPECT_EQ(fs::path(stats["input"]["path"].get<std::string>()).filename().string(),
            "caf\xef\xbf\xbd.wav");
  EXPECT_EQ(stats["input"]["channels"], 1);
  EXPECT_EQ(json::parse(read_bytes(out() / "caf\xe8.json"))["input"]["channels"], 2);

  const BatchSummary again = run_batch(cfg, quiet_options());
  EXPECT_EQ(again.skipped, 4);
  EXPECT_EQ(again.ok, 0);
  // The one touched since is redone, not the other that reads alike.
  fs::last_write_time(in() / e_acute, fs::file_time_type::clock::now() + std::chrono::hours(1));
  const BatchSummary third = run_batch(cfg, quiet_options());
  EXPECT_EQ(third.ok, 1);
  EXPECT_EQ(third.skipped, 3);
  for (const BatchFileResult& r : third.files)
    if (r.status == BatchStatus::ok) {
      EXPECT_EQ(fs::path(r.item.input).filename().string(), e_acute);
    }
}

// Two names that read alike in JSON (their odd bytes both U+FFFD) are never
// taken for each other by the resume check: the same file name in folders
// d\xe9 and d\xe8, written in turn to one out_dir; and a link retargeted from
// one to the other. Each run redoes the file (the record keeps the bytes).
TEST_F(Batch, NamesThatReadAlikeAreNeverTakenForEachOther) {
  const fs::path a = dir_.path() / "d\xe9" / "take.wav", b = dir_.path() / "d\xe8" / "take.wav";
  fs::create_directories(a.parent_path());
  fs::create_directories(b.parent_path());
  fs::copy_file(in() / "a_mono8k.wav", a);
  fs::copy_file(in() / "b_stereo44.wav", b);
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
  fs::last_write_time(a, old);
  fs::last_write_time(b, old);
  const Config cfg = config("[]");
  const auto run_one = [&](const fs::path& input) {
    BatchOptions o = quiet_options();
    o.extra_inputs = {input.string()};
    return run_batch(cfg, o);
  };
  const auto channels = [&](const std::string& stem) {
    return json::parse(read_bytes(out() / (stem + ".json")))["input"]["channels"].get<int>();
  };
  EXPECT_EQ(run_one(a).ok, 1);
  EXPECT_EQ(channels("take"), 1);
  EXPECT_EQ(run_one(a).skipped, 1) << "the same file again is up to date";
  const BatchSummary other = run_one(b);
  EXPECT_EQ(other.ok, 1) << "another file whose path reads alike was taken as up to date";
  EXPECT_EQ(channels("take"), 2);

  const fs::path link = dir_.path() / "cur.wav";
  fs::create_symlink(a, link);
  EXPECT_EQ(run_one(link).ok, 1);
  EXPECT_EQ(channels("cur"), 1);
  fs::remove(link);
  fs::create_symlink(b, link);
  EXPECT_EQ(run_one(link).ok, 1) << "a link retargeted to a name that reads alike was skipped";
  EXPECT_EQ(channels("cur"), 2);
  EXPECT_EQ(run_one(link).skipped, 1);
}

TEST_F(Batch, TemporariesLeftByAKilledRunAreRemovedOnResume) {
  // What a SIGKILL mid-file leaves where O_TMPFILE is missing: AtomicFile's
  // hidden temporaries next to the targets, named for this host and the dead pid.
  const long dead = test::dead_pid();
  const std::string& host = temp_host_tag();
  const std::string other_host = host == "other-host" ? "another-host" : "other-host";
  const auto old = fs::file_time_type::clock::now() - kOldTempAge - std::chrono::hours(1);
  write_text(out() / temp_file_name("a_mono8k.wav", host, dead, "Ab12Cd"), "partial");
  write_text(out() / "sub" / temp_file_name("c_three48.json", host, dead, "xyz789"), "{");
  write_text(out() / temp_file_name("batch_summary.json", host, dead, "QQQQQQ"), "{");
  write_text(out() / ".b_stereo44.csv.sigstream-Old123", "an earlier version's, two days old");
  fs::last_write_time(out() / ".b_stereo44.csv.sigstream-Old123", old);
  // Left alone: not ours, a writer on another host, a fresh one of an earlier version.
  write_text(out() / temp_file_name("unrelated.wav", host, dead, "Ab12Cd"), "no such output");
  write_text(out() / temp_file_name("b_stereo44.wav", other_host, dead, "Ab12Cd"),
             "another host's");
  write_text(out() / "sub" / ".d_stereo48.wav.sigstream-New456", "an earlier version's, fresh");
  std::vector<std::string> lines;
  BatchOptions o;
  o.log = [&](const std::string& m) { lines.push_back(m); };
  EXPECT_EQ(run_batch(tree_config(), o).ok, 4);
  EXPECT_EQ(tree(out()), (std::vector<std::string>{
                             temp_file_name("b_stereo44.wav", other_host, dead, "Ab12Cd"),
                             temp_file_name("unrelated.wav", host, dead, "Ab12Cd"), "a_mono8k.csv",
                             "a_mono8k.json", "a_mono8k.wav", "b_stereo44.csv", "b_stereo44.json",
                             "b_stereo44.wav", "batch_summary.csv", "batch_summary.json",
                             "sub/.d_stereo48.wav.sigstream-New456", "sub/c_three48.csv",
                             "sub/c_three48.json", "sub/c_three48.wav", "sub/d_stereo48.csv",
                             "sub/d_stereo48.json", "sub/d_stereo48.wav"}));
  auto said = [&](const std::string& text) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(said("removed 4 temporary file(s) left by a killed run"));
  EXPECT_TRUE(said("1 temporary file(s) of other hosts left alone"));
  EXPECT_TRUE(said("1 temporary file(s) of writers that may still run left alone"))
      << testing::PrintToString(lines);
}

TEST_F(Batch, AChangedConfigRedoesEveryFile) {
  BatchOptions o = quiet_options();
  ASSERT_EQ(run_batch(tree_config(), o).ok, 4);
  EXPECT_EQ(run_batch(tree_config(), o).skipped, 4);
  const Config louder =
      config("[\"" + in().string() + "\"]", true, 2, "  - type: gain\n    db: -6\n");
  const BatchSummary s = run_batch(louder, o);
  EXPECT_EQ(s.ok, 4);
  EXPECT_EQ(s.skipped, 0);
}

// The resume check reads each file's own record of the config that made it,
// not the batch summary, which may be missing or left by another run.
TEST_F(Batch, AChangedSetWithoutASummaryRedoesTheFiles) {
  const std::string inputs = "[\"" + in().string() + "\"]";
  const std::string gain = "  - type: gain\n    db: 0\n";
  const Config base = config(inputs, true, 2, gain);
  BatchOptions o = quiet_options();
  ASSERT_EQ(run_batch(base, o).ok, 4);
  std::map<std::string, std::string> bytes;
  for (const auto& f : kOutputs)
    bytes[f] = read_bytes(out() / f);
  auto drop_summary = [&] {
    fs::remove(out() / "batch_summary.json");
    fs::remove(out() / "batch_summary.csv");
  };

  // `--set stages.2.db=-6` with no summary left: every file redone, at -6 dB.
  drop_summary();
  const Config louder =
      parse_config(yaml(inputs, true, 2, gain), "batch-test.yaml", {"stages.2.db=-6"});
  const BatchSummary s = run_batch(louder, o);
  EXPECT_EQ(s.ok, 4);
  EXPECT_EQ(s.skipped, 0);
  for (const auto& f : kOutputs)
    EXPECT_NE(read_bytes(out() / f), bytes.at(f)) << f;

  // Back to the first config, again without a summary: redone, the first bytes again.
  drop_summary();
  const BatchSummary back = run_batch(base, o);
  EXPECT_EQ(back.ok, 4);
  EXPECT_EQ(back.skipped, 0);
  for (const auto& f : kOutputs)
    EXPECT_EQ(read_bytes(out() / f), bytes.at(f)) << f;
}

TEST_F(Batch, AnUnchangedConfigStillSkipsWithoutASummary) {
  const Config cfg = tree_config();
  BatchOptions o = quiet_options();
  ASSERT_EQ(run_batch(cfg, o).ok, 4);
  // Each file's statistics record the effective config that made them.
  const json stats = json::parse(read_bytes(out() / "a_mono8k.json"));
  EXPECT_EQ(stats["batch"]["config_fingerprint"], batch_config_fingerprint(cfg, "cpu"));

  std::map<std::string, fs::file_time_type> times;
  for (const auto& f : tree(out()))
    times[f] = fs::last_write_time(out() / f);
  fs::remove(out() / "batch_summary.json");
  fs::remove(out() / "batch_summary.csv");
  const BatchSummary s = run_batch(cfg, o);
  EXPECT_EQ(s.skipped, 4);
  EXPECT_EQ(s.ok, 0);
  for (const auto& [f, t] : times) {
    if (f.rfind("batch_summary", 0) == 0)
      continue;
    EXPECT_EQ(fs::last_write_time(out() / f), t) << f << " was rewritten";
  }
}

TEST_F(Batch, ASummaryThatMatchesDoesNotHideAFileMadeByAnotherConfig) {
  const Config base = tree_config();
  BatchOptions o = quiet_options();
  ASSERT_EQ(run_batch(base, o).ok, 4);
  const std::string original = read_bytes(out() / "a_mono8k.wav");

  // What a run with another config leaves when it is killed after one file:
  // that file remade, no summary of its own (the old one still says `base`).
  const Config louder = config("[]", true, 2, "  - type: gain\n    db: -6\n");
  BatchOptions other = quiet_options();
  other.extra_inputs = {(in() / "a_mono8k.wav").string()};
  other.summary_json = (dir_.path() / "elsewhere" / "summary.json").string();
  ASSERT_EQ(run_batch(louder, other).ok, 1);
  ASSERT_NE(read_bytes(out() / "a_mono8k.wav"), original);
  const json summary = json::parse(read_bytes(out() / "batch_summary.json"));
  ASSERT_EQ(summary["config_fingerprint"], batch_config_fingerprint(base, "cpu"));

  std::vector<std::string> lines;
  o.quiet = false;
  o.log = [&](const std::string& m) { lines.push_back(m); };
  const BatchSummary s = run_batch(base, o);
  EXPECT_EQ(s.ok, 1);
  EXPECT_EQ(s.skipped, 3);
  for (const BatchFileResult& r : s.files) {
    if (fs::path(r.item.input).filename() == "a_mono8k.wav") {
      EXPECT_EQ(r.status, BatchStatus::ok);
    }
  }
  EXPECT_EQ(read_bytes(out() / "a_mono8k.wav"), original);
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("1 complete file(s)") != std::string::npos &&
           l.find("another config") != std::string::npos;
  }));
}

TEST_F(Batch, AFileKilledBeforeItsRecordWasWrittenIsRedone) {
  const Config base = tree_config();
  ASSERT_EQ(run_batch(base, quiet_options()).ok, 4);
  std::map<std::string, std::string> bytes;
  for (const auto& f : kOutputs)
    bytes[f] = read_bytes(out() / f);

  // Another config, killed right after the pipeline replaced one file's audio
  // and CSV, before the batch wrote that file's statistics.
  const Config louder =
      config("[\"" + in().string() + "\"]", true, 1, "  - type: gain\n    db: -6\n");
  BatchOptions killed = quiet_options();
  killed.runner = [](const Config& c, const RunOptions& ro) {
    RunReport rep = run_pipeline(c, ro);
    if (fs::path(*c.source.file).filename() == "a_mono8k.wav")
      throw Error(ErrorKind::interrupted, "killed after the pipeline committed");
    return rep;
  };
  (void)run_batch(louder, killed);
  ASSERT_NE(read_bytes(out() / "a_mono8k.wav"), bytes.at("a_mono8k.wav"));

  const BatchSummary s = run_batch(base, quiet_options());
  for (const BatchFileResult& r : s.files) {
    if (fs::path(r.item.input).filename() == "a_mono8k.wav") {
      EXPECT_EQ(r.status, BatchStatus::ok);
    }
  }
  for (const auto& f : kOutputs)
    EXPECT_EQ(read_bytes(out() / f), bytes.at(f)) << f;
}

// What a worker killed between its commits leaves (pipeline/batch_commit.hpp):
// a finished batch's a_mono8k made back into a pending one. Its statistics JSON
// (and, with `csv_too`, its CSV: killed between the audio and CSV commits)
// back under a hidden temporary name of `pid` on this host. Returns the JSON temporary.
fs::path make_pending(const fs::path& out, long pid, bool csv_too) {
  const fs::path json = out / temp_file_name("a_mono8k.json", temp_host_tag(), pid, "Zz9999");
  fs::rename(out / "a_mono8k.json", json);
  if (csv_too)
    fs::rename(out / "a_mono8k.csv",
               out / temp_file_name("a_mono8k.csv", temp_host_tag(), pid, "Yy8888"));
  return json;
}

struct Ident {
  ino_t ino = 0;
  std::int64_t mtime_ns = 0;
  friend bool operator==(const Ident&, const Ident&) = default;
};
Ident ident(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0)
    return {};
  return {st.st_ino,
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

BatchStatus status_of(const BatchSummary& s, const std::string& name) {
  for (const BatchFileResult& r : s.files)
    if (fs::path(r.item.input).filename() == name)
      return r.status;
  return BatchStatus::not_run;
}

TEST_F(Batch, ARetryCompletesTheCommitsOfAWorkerKilledBetweenThem) {
  for (const bool csv_too : {false, true}) {
    SCOPED_TRACE(csv_too ? "killed after the audio commit" : "killed after the CSV commit");
    fs::remove_all(out());
    ASSERT_EQ(run_batch(tree_config(), quiet_options()).ok, 4);
    const Ident audio = ident(out() / "a_mono8k.wav"), csv = ident(out() / "a_mono8k.csv");
    const std::string stats = read_bytes(out() / "a_mono8k.json");
    const json record = json::parse(stats)["batch"]["commit"];
    EXPECT_EQ(record["output"]["ino"].get<std::uint64_t>(), audio.ino)
        << "the inode survives the link";
    EXPECT_EQ(record["csv"]["ino"].get<std::uint64_t>(), csv.ino);
    make_pending(out(), test::dead_pid(), csv_too);
    ASSERT_FALSE(fs::exists(out() / "a_mono8k.json"));

    std::vector<std::string> lines;
    BatchOptions o = quiet_options();
    o.quiet = false;
    o.log = [&](const std::string& l) { lines.push_back(l); };
    const BatchSummary s = run_batch(tree_config(), o);
    EXPECT_EQ(s.skipped, 4);
    EXPECT_EQ(s.ok, 0);
    EXPECT_EQ(status_of(s, "a_mono8k.wav"), BatchStatus::skipped);
    EXPECT_TRUE(ident(out() / "a_mono8k.wav") == audio) << "the audio was not written again";
    EXPECT_TRUE(ident(out() / "a_mono8k.csv") == csv) << "the dead worker's CSV, moved into place";
    EXPECT_EQ(read_bytes(out() / "a_mono8k.json"), stats);
    EXPECT_FALSE(has_temp_files(out()));
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("completed the commits of 1 file") != std::string::npos;
    }));
  }
}

TEST_F(Batch, APendingRecordOfALiveWriterIsNeitherTakenNorRemoved) {
  ASSERT_EQ(run_batch(tree_config(), quiet_options()).ok, 4);
  const fs::path pending = make_pending(out(), static_cast<long>(::getppid()), false);
  const BatchSummary s = run_batch(tree_config(), quiet_options());
  EXPECT_EQ(status_of(s, "a_mono8k.wav"), BatchStatus::ok) << "redone: its writer may still run";
  EXPECT_EQ(s.skipped, 3);
  EXPECT_TRUE(fs::exists(pending)) << "a live writer's temporary stays";
}

TEST_F(Batch, APendingRecordOfAnotherAudioFileOrConfigIsNotTaken) {
  for (const std::string what : {"audio replaced", "another config", "truncated record"}) {
    SCOPED_TRACE(what);
    fs::remove_all(out());
    ASSERT_EQ(run_batch(tree_config(), quiet_options()).ok, 4);
    const fs::path pending = make_pending(out(), test::dead_pid(), true);
    if (what == "audio replaced") {
      // Same bytes, another file (what `sigstream run` writing it meanwhile leaves).
      const std::string bytes = read_bytes(out() / "a_mono8k.wav");
      fs::remove(out() / "a_mono8k.wav");
      write_text(out() / "a_mono8k.wav", bytes);
    } else if (what == "another config") {
      json j = json::parse(read_bytes(pending));
      j["batch"]["config_fingerprint"] = "0000000000000000";
      write_text(pending, j.dump(2));
    } else {
      const std::string text = read_bytes(pending);
      write_text(pending, text.substr(0, text.size() / 2));
    }
    const Ident before = ident(out() / "a_mono8k.wav");
    const BatchSummary s = run_batch(tree_config(), quiet_options());
    EXPECT_EQ(status_of(s, "a_mono8k.wav"), BatchStatus::ok) << "redone";
    EXPECT_EQ(s.skipped, 3);
    EXPECT_FALSE(ident(out() / "a_mono8k.wav") == before) << "a new audio file";
    EXPECT_TRUE(fs::exists(out() / "a_mono8k.json"));
    EXPECT_TRUE(fs::exists(out() / "a_mono8k.csv"));
    EXPECT_FALSE(has_temp_files(out())) << "the dead writer's temporaries removed";
  }
}

TEST_F(Batch, APendingRecordWithNothingCommittedBeforeItIsRedone) {
  // Statistics alone (no audio, no CSV): the JSON is the file's only commit,
  // so a dead writer's pending JSON committed nothing; the file is redone
  // (its commit then happens once) and the temporary swept. So is a pending
  // record whose audio never reached its path.
  for (const bool audio : {false, true}) {
    SCOPED_TRACE(audio ? "the audio not committed" : "statistics alone");
    fs::remove_all(out());
    Config c = tree_config();
    if (!audio) {
      c.sink.file.reset();
      c.stats.csv.reset();
    }
    ASSERT_EQ(run_batch(c, quiet_options()).ok, 4);
    const std::string stats = read_bytes(out() / "a_mono8k.json");
    const fs::path pending = make_pending(out(), test::dead_pid(), false);
    if (audio)
      fs::remove(out() / "a_mono8k.wav");
    std::vector<std::string> lines;
    BatchOptions o = quiet_options();
    o.quiet = false;
    o.log = [&](const std::string& l) { lines.push_back(l); };
    const BatchSummary s = run_batch(c, o);
    EXPECT_EQ(status_of(s, "a_mono8k.wav"), BatchStatus::ok) << "redone";
    EXPECT_EQ(s.skipped, 3);
    EXPECT_FALSE(fs::exists(pending));
    EXPECT_FALSE(has_temp_files(out()));
    EXPECT_EQ(fs::exists(out() / "a_mono8k.wav"), audio);
    EXPECT_FALSE(fs::exists(out() / "a_mono8k.csv") && !audio);
    ASSERT_TRUE(fs::exists(out() / "a_mono8k.json"));
    EXPECT_EQ(json::parse(read_bytes(out() / "a_mono8k.json"))["batch"]["config_fingerprint"],
              json::parse(stats)["batch"]["config_fingerprint"]);
    EXPECT_FALSE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("completed the commits") != std::string::npos;
    }));
  }
}

TEST_F(Batch, WithoutAudioTheCsvIsTheFirstCommit) {
  // No sink: the CSV is the first output a commit puts in place. Committed
  // (killed before the JSON), the pending record is completed; still a
  // temporary, nothing was committed and the file is redone.
  for (const bool csv_committed : {true, false}) {
    SCOPED_TRACE(csv_committed ? "the CSV committed" : "the CSV still a temporary");
    fs::remove_all(out());
    Config c = tree_config();
    c.sink.file.reset();
    ASSERT_EQ(run_batch(c, quiet_options()).ok, 4);
    ASSERT_FALSE(fs::exists(out() / "a_mono8k.wav"));
    const Ident csv = ident(out() / "a_mono8k.csv");
    make_pending(out(), test::dead_pid(), !csv_committed);
    std::vector<std::string> lines;
    BatchOptions o = quiet_options();
    o.quiet = false;
    o.log = [&](const std::string& l) { lines.push_back(l); };
    const BatchSummary s = run_batch(c, o);
    EXPECT_EQ(status_of(s, "a_mono8k.wav"), csv_committed ? BatchStatus::skipped : BatchStatus::ok);
    EXPECT_EQ(ident(out() / "a_mono8k.csv") == csv, csv_committed)
        << "completed: the committed CSV stays; redone: a new one";
    EXPECT_TRUE(fs::exists(out() / "a_mono8k.json"));
    EXPECT_FALSE(has_temp_files(out()));
    EXPECT_EQ(std::any_of(lines.begin(), lines.end(),
                          [](const std::string& l) {
                            return l.find("completed the commits of 1 file") != std::string::npos;
                          }),
              csv_committed);
  }
}

TEST_F(Batch, AWorkerCompletesACommitLeftPendingSinceTheBatchStarted) {
  // One worker, largest file first: while it runs the first file, a_mono8k
  // (last in its order) is committed by "another process" that is then killed
  // before its JSON commit. The worker completes it rather than redoing it.
  ASSERT_EQ(run_batch(tree_config(), quiet_options()).ok, 4);
  // Not done when the batch starts; b_stereo44 (larger) runs first.
  fs::remove(out() / "a_mono8k.json");
  fs::remove(out() / "b_stereo44.json");
  Ident audio;
  std::vector<std::string> ran;
  BatchOptions o = quiet_options();
  o.runner = [&](const Config& c, const RunOptions& ro) {
    ran.push_back(fs::path(*c.source.file).filename().string());
    if (ran.size() == 1) {
      const Config other = config("[\"" + (in() / "a_mono8k.wav").string() + "\"]", true, 1);
      EXPECT_EQ(run_batch(other, quiet_options()).ok, 1);
      audio = ident(out() / "a_mono8k.wav");
      make_pending(out(), test::dead_pid(), false);
    }
    return run_pipeline(c, ro);
  };
  const BatchSummary s = run_batch(tree_config(true, 1), o);
  ASSERT_FALSE(ran.empty());
  EXPECT_EQ(ran.front(), "b_stereo44.wav");
  EXPECT_EQ(std::count(ran.begin(), ran.end(), "a_mono8k.wav"), 0);
  EXPECT_EQ(status_of(s, "a_mono8k.wav"), BatchStatus::skipped);
  EXPECT_EQ(status_of(s, "b_stereo44.wav"), BatchStatus::ok);
  EXPECT_TRUE(ident(out() / "a_mono8k.wav") == audio);
  EXPECT_TRUE(fs::exists(out() / "a_mono8k.json"));
  EXPECT_FALSE(has_temp_files(out()));
}

TEST_F(Batch, AStopRequestedByADistributedDriverStartsNoFurtherFile) {
  // One worker; the driver's stop arrives while the first file runs: it finishes (ok), the
  // others are never started (not_run), and the summary says interrupted (exit 130).
  std::atomic<int> ran{0};
  std::atomic<bool> asked{false};
  BatchOptions o = quiet_options();
  o.stop_requested = [&] { return asked.load(); };
  o.runner = [&](const Config& c, const RunOptions& ro) {
    ++ran;
    asked = true;
    return run_pipeline(c, ro);
  };
  const BatchSummary s = run_batch(tree_config(true, 1), o);
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(s.ok, 1);
  EXPECT_EQ(s.not_run, static_cast<int>(s.files.size()) - 1);
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.exit_code(), 130);
  // Asked while the last file runs: nothing left to stop, not interrupted.
  const int total = static_cast<int>(s.files.size());
  ran = 0;
  BatchOptions late = quiet_options();
  late.force = true;
  late.stop_requested = [&] { return ran == total; };
  late.runner = [&](const Config& c, const RunOptions& ro) {
    ++ran;
    return run_pipeline(c, ro);
  };
  const BatchSummary all = run_batch(tree_config(true, 1), late);
  EXPECT_EQ(ran, total);
  EXPECT_FALSE(all.interrupted);
  EXPECT_EQ(all.not_run, 0);
}

TEST_F(Batch, AFileIsKnownByTheRecordsInputElseByInputPath) {
  // The record's input (absolute: from any working folder) decides where it exists here; else
  // the statistics' input.path (statistics made before the record had one, or another host's
  // path); and the file the input resolved to then, where it exists, must be this one.
  ASSERT_EQ(run_batch(tree_config(), quiet_options()).ok, 4);
  const fs::path stats = out() / "a_mono8k.json";
  const json made = json::parse(read_bytes(stats));
  ASSERT_EQ(fs::path(made["batch"]["input"].get<std::string>()), in() / "a_mono8k.wav");
  const auto rerun_status = [&](const json& j) {
    write_text(stats, j.dump(2));
    return status_of(run_batch(tree_config(), quiet_options()), "a_mono8k.wav");
  };
  json older = made;
  older["batch"].erase("input");
  older["batch"].erase("input_resolved");
  EXPECT_EQ(rerun_status(older), BatchStatus::skipped) << "no record input: input.path";
  json elsewhere = made;
  elsewhere["batch"]["input"] = "/another/host/a_mono8k.wav";
  EXPECT_EQ(rerun_status(elsewhere), BatchStatus::skipped) << "not here: input.path";
  json moved = made;
  moved["input"]["path"] = "relative/from/elsewhere/a_mono8k.wav";
  EXPECT_EQ(rerun_status(moved), BatchStatus::skipped) << "the record names it";
  json other = made;
  other["batch"]["input"] = (in() / "sub" / "d_stereo48.wav").string();
  EXPECT_EQ(rerun_status(other), BatchStatus::ok) << "the record names another file here: redone";
  json retargeted = json::parse(read_bytes(stats));
  retargeted["batch"]["input_resolved"] = (in() / "sub" / "d_stereo48.wav").string();
  EXPECT_EQ(rerun_status(retargeted), BatchStatus::ok)
      << "it resolved to another file then: redone";
  json neither = json::parse(read_bytes(stats));
  neither["input"]["path"] = "/nowhere/a_mono8k.wav";
  neither["batch"]["input"] = "/nowhere/a_mono8k.wav";
  EXPECT_EQ(rerun_status(neither), BatchStatus::ok) << "another input's statistics: redone";
}

TEST_F(Batch, TemporariesBesideUpToDateFilesAreRemovedToo) {
  // A killed run with another config was rewriting a file that this config finds up to date.
  ASSERT_EQ(run_batch(tree_config(), quiet_options()).ok, 4);
  const long dead = test::dead_pid();
  write_text(out() / temp_file_name("a_mono8k.wav", temp_host_tag(), dead, "Zz9999"), "partial");
  write_text(out() / "sub" / temp_file_name("d_stereo48.json", temp_host_tag(), dead, "Zz9999"),
             "{");
  const BatchSummary s = run_batch(tree_config(), quiet_options());
  EXPECT_EQ(s.skipped, 4);
  EXPECT_FALSE(has_temp_files(out()));
}

TEST_F(Batch, AFileCommittedByAnotherProcessMeanwhileIsSkippedNotCommittedAgain) {
  // One worker, largest file first. While it starts on the first file, another
  // batch (what a retried task or a second shard is) commits a_mono8k, the
  // last good file of this batch's order: this batch must skip it.
  const Config cfg = tree_config(true, 1);
  const Config other = config("[\"" + (in() / "a_mono8k.wav").string() + "\"]", true, 1);
  std::vector<std::string> ran;
  fs::file_time_type committed{};
  ino_t inode = 0;
  BatchOptions o = quiet_options();
  o.runner = [&](const Config& c, const RunOptions& ro) {
    ran.push_back(fs::path(*c.source.file).filename().string());
    if (ran.size() == 1) {
      EXPECT_EQ(run_batch(other, quiet_options()).ok, 1);
      committed = fs::last_write_time(out() / "a_mono8k.wav");
      struct stat st {};
      EXPECT_EQ(::stat((out() / "a_mono8k.wav").c_str(), &st), 0);
      inode = st.st_ino;
    }
    return run_pipeline(c, ro);
  };
  const BatchSummary s = run_batch(cfg, o);
  ASSERT_GT(ran.size(), 1u);
  EXPECT_NE(ran.front(), "a_mono8k.wav");
  EXPECT_EQ(std::count(ran.begin(), ran.end(), "a_mono8k.wav"), 0)
      << "run once, by the other batch";
  EXPECT_EQ(s.ok, 3);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.failed, 1) << "bad.wav: an error entry, as ever";
  struct stat st {};
  ASSERT_EQ(::stat((out() / "a_mono8k.wav").c_str(), &st), 0);
  EXPECT_EQ(st.st_ino, inode) << "committed once: the other batch's file is still in place";
  EXPECT_EQ(fs::last_write_time(out() / "a_mono8k.wav"), committed);
  const json j = json::parse(read_bytes(out() / "batch_summary.json"));
  EXPECT_EQ(j["counts"]["skipped"], 1);
  for (const json& e : j["files"]) {
    const std::string name = fs::path(e["file"].get<std::string>()).filename().string();
    if (name == "a_mono8k.wav") {
      EXPECT_EQ(e["status"], "skipped") << e;
    }
    if (name == "bad.wav") {
      EXPECT_EQ(e["status"], "failed") << e;
    }
  }
  for (const auto& f : kOutputs)
    EXPECT_TRUE(fs::exists(out() / f)) << f;
  EXPECT_FALSE(has_temp_files(out()));
}

TEST_F(Batch, FailedFilesNameNoOutputButKeepWhatTheirHeaderSays) {
  // A FLAC cut in half opens (its header is whole) and fails while being read.
  const fs::path flac = in() / "sub/c_three48.flac";
  const std::string whole = read_bytes(flac);
  {
    std::ofstream cut(flac, std::ios::binary | std::ios::trunc);
    cut << whole.substr(0, whole.size() / 2);
  }
  const BatchSummary s = run_batch(tree_config(), quiet_options());
  EXPECT_EQ(s.ok, 3);
  EXPECT_EQ(s.failed, 2);
  EXPECT_FALSE(fs::exists(out() / "sub/c_three48.wav"));

  const json j = json::parse(read_bytes(out() / "batch_summary.json"));
  std::map<std::string, json> by_name;
  for (const json& e : j["files"])
    by_name[fs::path(e["file"].get<std::string>()).filename().string()] = e;
  const json& cut = by_name.at("c_three48.flac");
  EXPECT_EQ(cut["status"], "failed");
  EXPECT_TRUE(cut["output"].is_null()) << cut;
  EXPECT_TRUE(cut["stats"].is_null()) << cut;
  EXPECT_EQ(cut["sample_rate"], 48000);
  EXPECT_EQ(cut["channels"], 3);
  EXPECT_EQ(cut["frames"], 12000);
  EXPECT_TRUE(cut["output_frames"].is_null()) << cut;
  EXPECT_TRUE(cut["frames_per_s"].is_null()) << cut;
  const json& bad = by_name.at("bad.wav");
  EXPECT_TRUE(bad["output"].is_null()) << bad;
  EXPECT_TRUE(bad["frames"].is_null()) << bad;
  EXPECT_EQ(fs::path(by_name.at("a_mono8k.wav")["output"].get<std::string>()),
            out() / "a_mono8k.wav");

  // The CSV likewise: no output for the failed rows, the header's numbers for the cut file.
  std::istringstream csv(read_bytes(out() / "batch_summary.csv"));
  std::string row;
  int failed_rows = 0;
  while (std::getline(csv, row)) {
    if (row.find(",failed,") == std::string::npos)
      continue;
    ++failed_rows;
    std::vector<std::string> fields;
    std::istringstream split(row);
    for (std::string field; std::getline(split, field, ',');)
      fields.push_back(field);
    ASSERT_GE(fields.size(), 3U) << row;
    EXPECT_EQ(fields[1], "") << row;
    if (row.find("c_three48.flac") != std::string::npos) {
      EXPECT_NE(row.find(",failed,12000,0.250000,48000,3,"), std::string::npos) << row;
    }
  }
  EXPECT_EQ(failed_rows, 2);
}

TEST_F(Batch, GlobsMirrorBelowTheirFixedPrefix) {
  const std::vector<BatchItem> all =
      collect_batch_items(config("[\"" + in().string() + "/**/*.wav\"]"), {}, out().string());
  std::vector<std::string> outs;
  for (const auto& it : all)
    outs.push_back(fs::path(it.output).lexically_relative(out()).string());
  EXPECT_EQ(outs, (std::vector<std::string>{"a_mono8k.wav", "b_stereo44.wav", "bad.wav",
                                            "sub/d_stereo48.wav"}));

  const std::vector<BatchItem> top =
      collect_batch_items(config("[\"" + in().string() + "/*.wav\"]"), {}, out().string());
  ASSERT_EQ(top.size(), 3U);
  for (const auto& it : top)
    EXPECT_EQ(it.subdir, "");
  EXPECT_EQ(fs::path(top[0].stats_json), out() / "a_mono8k.json");
  EXPECT_EQ(fs::path(top[0].stats_csv), out() / "a_mono8k.csv");

  const std::vector<BatchItem> sub =
      collect_batch_items(config("[\"" + in().string() + "/s*/*\"]"), {}, out().string());
  ASSERT_EQ(sub.size(), 2U);
  EXPECT_EQ(sub[0].subdir, "sub");
  EXPECT_EQ(fs::path(sub[0].output), out() / "sub/c_three48.wav");
}

TEST_F(Batch, CommandLineFilesGoStraightIntoOutDirAndAreNotTakenTwice) {
  const Config cfg = config("[]");
  const std::vector<BatchItem> items =
      collect_batch_items(cfg,
                          {(in() / "a_mono8k.wav").string(), (in() / "sub/d_stereo48.wav").string(),
                           (in() / "a_mono8k.wav").string()},
                          out().string());
  ASSERT_EQ(items.size(), 2U);
  EXPECT_EQ(fs::path(items[0].output), out() / "a_mono8k.wav");
  EXPECT_EQ(fs::path(items[1].output), out() / "d_stereo48.wav");

  // Config globs plus command-line files; the same file twice is one item.
  const std::vector<BatchItem> both =
      collect_batch_items(config("[\"" + in().string() + "/sub/*.wav\"]"),
                          {(in() / "sub/d_stereo48.wav").string()}, out().string());
  EXPECT_EQ(both.size(), 1U);
}

// Where a named file's outputs go does not depend on the other files: one from
// another folder joining the batch leaves the first outputs where they were,
// and the second run skips them (it had redone every file, into subfolders of
// their new common folder, leaving the first outputs behind).
TEST_F(Batch, ANamedFileKeepsItsOutputsWhenAFileFromElsewhereJoins) {
  const fs::path other = in().parent_path() / "elsewhere";
  fs::create_directories(other);
  test::write_audio((other / "z_joins.wav").string(), SF_FORMAT_WAV | SF_FORMAT_PCM_16, 8000, 1,
                    test::random_samples(301, 77, 0.5f, 16));
  const std::vector<std::string> first_files = {(in() / "a_mono8k.wav").string(),
                                                (in() / "sub/d_stereo48.wav").string()};
  BatchOptions o = quiet_options();
  o.extra_inputs = first_files;
  const BatchSummary first = run_batch(config("[]"), o);
  EXPECT_EQ(first.ok, 2);
  EXPECT_TRUE(fs::exists(out() / "a_mono8k.wav"));
  EXPECT_TRUE(fs::exists(out() / "d_stereo48.wav"));
  std::vector<std::string> more = first_files;
  more.push_back((other / "z_joins.wav").string());
  o.extra_inputs = more;
  const BatchSummary second = run_batch(config("[]"), o);
  EXPECT_EQ(second.ok, 1);
  EXPECT_EQ(second.skipped, 2) << "the first two files' outputs were not found again";
  EXPECT_TRUE(fs::exists(out() / "z_joins.wav"));
  std::size_t audio = 0;
  for (const auto& e : fs::recursive_directory_iterator(out()))
    audio += e.path().extension() == ".wav" ? 1 : 0;
  EXPECT_EQ(audio, 3U) << "outputs made twice, under two layouts";
}

TEST_F(Batch, NamedFilesOfOneStemCollideWithAHintToGiveTheirFolder) {
  test::write_audio((in() / "sub" / "a_mono8k.wav").string(), SF_FORMAT_WAV | SF_FORMAT_PCM_16,
                    8000, 1, test::random_samples(211, 78, 0.5f, 16));
  try {
    (void)collect_batch_items(
        config("[]"), {(in() / "a_mono8k.wav").string(), (in() / "sub/a_mono8k.wav").string()},
        out().string());
    ADD_FAILURE() << "no error for two named files of one stem";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("quoted glob"), std::string::npos) << e.what();
  }
  // Their folder, given instead, mirrors the subfolder: no collision.
  const std::vector<BatchItem> walked =
      collect_batch_items(config("[]"), {in().string()}, out().string());
  std::set<std::string> outputs;
  for (const BatchItem& it : walked)
    EXPECT_TRUE(outputs.insert(it.output).second) << it.output;
  EXPECT_EQ(outputs.count((out() / "sub" / "a_mono8k.wav").string()), 1U);
}

TEST_F(Batch, OutputsInsideTheInputTreeAreNeverInputs) {
  // out_dir inside the folder walked: a second run must not take the outputs as inputs.
  const fs::path nested = in() / "processed";
  Config cfg = tree_config();
  cfg.batch.out_dir = nested.string();
  const BatchSummary first = run_batch(cfg, quiet_options());
  EXPECT_EQ(first.files.size(), 5U);
  const BatchSummary second = run_batch(cfg, quiet_options());
  EXPECT_EQ(second.files.size(), 5U);
  EXPECT_EQ(second.skipped, 4);
}

// However out_dir is spelled (a trailing '/', dots, relative), a folder or a
// glob that reaches it never takes its files as inputs.
TEST_F(Batch, AFolderOrGlobNeverSearchesTheOutDirHoweverItIsSpelled) {
  const std::vector<std::string> patterns = {in().string(), in().string() + "/*",
                                             in().string() + "/**/*.wav"};
  std::vector<std::size_t> before; // each pattern's files, the out_dir elsewhere
  for (const std::string& pattern : patterns)
    before.push_back(
        collect_batch_items(config("[\"" + pattern + "\"]"), {}, out().string()).size());
  const fs::path nested = in() / "processed";
  fs::create_directories(nested);
  test::write_audio((nested / "old_output.wav").string(), SF_FORMAT_WAV | SF_FORMAT_PCM_16, 8000, 1,
                    test::random_samples(211, 5, 0.5f, 16));
  const std::string relative = fs::path(nested).lexically_relative(fs::current_path()).string();
  for (const std::string& spelled :
       {nested.string() + "/", nested.string() + "//", (in() / "sub" / ".." / "processed").string(),
        relative, relative + "/"}) {
    for (std::size_t k = 0; k < patterns.size(); ++k) {
      const std::vector<BatchItem> items =
          collect_batch_items(config("[\"" + patterns[k] + "\"]"), {}, spelled);
      for (const BatchItem& it : items)
        EXPECT_EQ(it.input.find("old_output"), std::string::npos)
            << it.input << " taken with out_dir " << spelled << ", inputs " << patterns[k];
      EXPECT_EQ(items.size(), before[k]) << spelled << ", " << patterns[k];
    }
  }
}

TEST_F(Batch, CollidingOrSelfOverwritingOutputsAreConfigErrors) {
  test::write_audio((in() / "a_mono8k.flac").string(), SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 8000, 1,
                    test::random_samples(100, 9, 0.5f, 16));
  try {
    (void)collect_batch_items(tree_config(), {}, out().string());
    ADD_FAILURE() << "no error for two inputs mapping to one output";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("a_mono8k.flac"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a_mono8k.wav"), std::string::npos) << e.what();
  }
  fs::remove(in() / "a_mono8k.flac");
  try {
    // Plain paths are taken even inside out_dir (globs and folders there are not).
    (void)collect_batch_items(config("[]"), {(in() / "a_mono8k.wav").string()}, in().string());
    ADD_FAILURE() << "no error for outputs over the inputs";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("overwrite the input"), std::string::npos) << e.what();
  }
}

// A truncated WAV fails (it does not open as a source), and its entry still
// gives what its header says, as a truncated FLAC's does.
TEST_F(Batch, ATruncatedWavsEntryGivesItsRateChannelsAndFrames) {
  const fs::path cut = in().parent_path() / "cut" / "short.wav";
  fs::create_directories(cut.parent_path());
  test::write_audio(cut.string(), SF_FORMAT_WAV | SF_FORMAT_PCM_16, 22050, 3,
                    test::random_samples(3 * 9001, 81, 0.5f, 16));
  fs::resize_file(cut, fs::file_size(cut) / 2);
  BatchOptions o = quiet_options();
  o.extra_inputs = {cut.string()};
  const BatchSummary s = run_batch(config("[]"), o);
  ASSERT_EQ(s.files.size(), 1U);
  const BatchFileResult& r = s.files[0];
  EXPECT_EQ(r.status, BatchStatus::failed);
  EXPECT_NE(r.error.find("truncated"), std::string::npos) << r.error;
  EXPECT_EQ(r.sample_rate, 22050.0);
  EXPECT_EQ(r.channels, 3);
  EXPECT_GT(r.frames, 0);
  EXPECT_LT(r.frames, 9001) << "what the file holds";
  EXPECT_EQ(r.input_format, "wav pcm16");
}

TEST_F(Batch, AnOutDirThatIsAFileIsOneConfigErrorBeforeAnyFile) {
  const fs::path file = in().parent_path() / "a_file";
  std::ofstream(file) << "not a folder";
  // The file itself, with a trailing separator, or a folder below it.
  for (const std::string& dir :
       {file.string(), file.string() + "/", (file / "sub" / "deeper").string()}) {
    Config cfg = tree_config();
    cfg.batch.out_dir = dir;
    try {
      (void)run_batch(cfg, quiet_options());
      ADD_FAILURE() << "no error for " << dir;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::config);
      EXPECT_NE(std::string(e.what()).find("is a file, not a folder"), std::string::npos)
          << e.what();
    }
  }
  // A folder still to make, below one that exists, is fine.
  EXPECT_NO_THROW(check_out_dir((in().parent_path() / "new" / "deeper").string()));
  EXPECT_FALSE(fs::exists(in().parent_path() / "new")) << "the check made a folder";
}

TEST_F(Batch, NoInputsIsAConfigError) {
  std::vector<std::string> warnings;
  BatchOptions o;
  o.log = [&](const std::string& m) { warnings.push_back(m); };
  try {
    (void)run_batch(config("[\"" + in().string() + "/*.nothing\"]"), o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("*.nothing"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out()));
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("matched no audio files"), std::string::npos) << warnings[0];
}

TEST_F(Batch, AnInputFolderThatIsTheOutDirIsNamedAsSuch) {
  // `sigstream batch cfg in --out-dir in`: out_dir is never searched (its files would be the
  // batch's own outputs); the warning says that, and what to give instead.
  std::vector<std::string> warnings;
  BatchOptions o;
  o.log = [&](const std::string& m) { warnings.push_back(m); };
  Config cfg = config("[\"" + in().string() + "\"]");
  cfg.batch.out_dir = in().string();
  EXPECT_THROW((void)run_batch(cfg, o), Error);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("is the out_dir,"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find((in() / "filtered").string()), std::string::npos) << warnings[0];
  // The suggested out_dir works: the folder's files are found, the suggestion skipped.
  warnings.clear();
  cfg.batch.out_dir = (in() / "filtered").string();
  const BatchSummary s = run_batch(cfg, o);
  EXPECT_GT(s.ok, 0);
  EXPECT_EQ(s.failed, 1); // the fixture's bad.wav
  for (const auto& w : warnings)
    EXPECT_EQ(w.find("out_dir"), std::string::npos) << w;
}

// ----------------------------------------------------------------- scheduling

TEST(BatchScheduling, WorkersPerDeviceAreInterleavedAndCapped) {
  auto devices_of = [](const std::vector<BatchWorker>& ws) {
    std::vector<int> d;
    for (const auto& w : ws)
      d.push_back(w.device);
    return d;
  };
  EXPECT_EQ(devices_of(plan_batch_workers({0, 1}, 2, 8, 100)), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(devices_of(plan_batch_workers({0, 1, 2}, 2, 8, 100)),
            (std::vector<int>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(devices_of(plan_batch_workers({0, 1, 2}, 2, 8, 2)),
            (std::vector<int>{0, 1})); // few files: spread
  EXPECT_EQ(devices_of(plan_batch_workers({2, 5}, 3, 8, 100)),
            (std::vector<int>{2, 5, 2, 5, 2, 5}));
  // Auto (0): the CPU threads over the GPUs, at least 2 and at most 16 a GPU,
  // at most a worker a file.
  EXPECT_EQ(plan_batch_workers({0}, 0, 8, 10).size(), 8U);
  EXPECT_EQ(devices_of(plan_batch_workers({0, 1}, 0, 5, 100)),
            (std::vector<int>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(plan_batch_workers({0, 1, 2, 3}, 0, 4, 100).size(), 8U);
  EXPECT_EQ(plan_batch_workers({0}, 0, 64, 3).size(), 3U);
  EXPECT_EQ(plan_batch_workers({0}, 0, 16, 100).size(), 16U);
  EXPECT_EQ(plan_batch_workers({0}, 0, 64, 100).size(), 16U);            // capped
  EXPECT_EQ(plan_batch_workers({0, 1, 2, 3}, 0, 64, 1000).size(), 64U);  // 16 a GPU
  EXPECT_EQ(plan_batch_workers({0, 1, 2, 3}, 0, 128, 1000).size(), 64U); // capped
  EXPECT_EQ(plan_batch_workers({0, 1}, 0, 12, 100).size(), 12U);         // 6 a GPU
  EXPECT_EQ(plan_batch_workers({0}, 12, 64, 100).size(), 12U);           // asked for: not capped

  // CPU: the thread budget split over the workers.
  auto cpu = plan_batch_workers({}, 2, 16, 3);
  ASSERT_EQ(cpu.size(), 3U);
  for (const auto& w : cpu) {
    EXPECT_EQ(w.device, -1);
    EXPECT_EQ(w.threads, 5);
  }
  cpu = plan_batch_workers({}, 2, 2, 40);
  ASSERT_EQ(cpu.size(), 2U);
  EXPECT_EQ(cpu[0].threads, 1);
  cpu = plan_batch_workers({}, 2, 1, 40);
  ASSERT_EQ(cpu.size(), 1U);
  EXPECT_EQ(cpu[0].threads, 1);
  EXPECT_EQ(plan_batch_workers({}, 2, 8, 0).size(), 1U);
}

TEST(BatchScheduling, DevicesResolveAgainstTheDeviceCount) {
  EXPECT_EQ(resolve_batch_devices({}, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(resolve_batch_devices({}, 0), std::vector<int>{});
  EXPECT_EQ(resolve_batch_devices({1}, 2), std::vector<int>{1});
  EXPECT_EQ(resolve_batch_devices({2, 0}, 3), (std::vector<int>{2, 0}));
  try {
    (void)resolve_batch_devices({0, 3}, 2);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("execution.device: device 3 does not exist"),
              std::string::npos)
        << e.what();
  }
}

TEST(BatchScheduling, LargestFilesAreHandedOutFirst) {
  EXPECT_EQ(batch_dispatch_order({10, 30, 20, 30, 0}), (std::vector<std::size_t>{1, 3, 2, 0, 4}));
  EXPECT_TRUE(batch_dispatch_order({}).empty());
}

// A fake file job: records where it ran and writes what run_pipeline would.
struct FakeRuns {
  std::mutex mutex;
  std::map<std::string, std::vector<int>> devices_of; // input -> execution.devices
  std::map<int, int> running, max_running;
  std::atomic<int> calls{0};
  std::string interrupt_at; // input that ends with Error(interrupted)
  int sleep_ms = 15;        // a file's run

  RunReport run(const Config& c, const RunOptions&) {
    ++calls;
    const int d = c.execution.devices.empty() ? -1 : c.execution.devices.front();
    {
      std::lock_guard lock(mutex);
      devices_of[*c.source.file] = c.execution.devices;
      max_running[d] = std::max(max_running[d], ++running[d]);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    {
      std::lock_guard lock(mutex);
      --running[d];
    }
    if (!interrupt_at.empty() && *c.source.file == interrupt_at)
      throw Error(ErrorKind::interrupted, "interrupted by SIGINT: no output written");
    RunReport r;
    r.input_path = *c.source.file;
    r.sample_rate = 48000;
    r.channels = 2;
    r.input_frames = r.output_frames = 4800;
    r.backend = c.execution.backend == BackendKind::cuda ? "cuda" : "cpu";
    r.device = "fake device " + std::to_string(d);
    r.metrics.push_back({"output", {ChannelMetrics{}, ChannelMetrics{}}, {}});
    if (c.sink.file)
      write_file_atomic(*c.sink.file, "fake audio");
    // The batch writes each file's statistics JSON itself (with its config record).
    if (c.stats.json)
      write_file_atomic(*c.stats.json, stats_json(r));
    return r;
  }
};

class BatchDevices : public ::testing::TestWithParam<int> {};

TEST_P(BatchDevices, FilesAreSplitOverAllInjectedDevices) {
  const int count = GetParam();
  TempDir dir;
  constexpr int kFiles = 24;
  for (int i = 0; i < kFiles; ++i)
    write_text(dir.path() / "in" / ("f" + std::to_string(i) + ".wav"), "x");
  Config cfg = parse_config(
      "version: 1\nsource: {file: p.wav}\nsink: {file: p.flac}\nexecution: {backend: auto}\n"
      "batch: {inputs: [\"" +
          (dir.path() / "in").string() + "\"], out_dir: " + (dir.path() / "out").string() + "}\n",
      "devices.yaml");
  FakeRuns fake;
  BatchOptions o;
  o.quiet = true;
  o.device_count_override = count;
  o.files_per_device = 2;
  o.runner = [&](const Config& c, const RunOptions& ro) { return fake.run(c, ro); };
  const BatchSummary s = run_batch(cfg, o);

  EXPECT_EQ(s.exit_code(), 0);
  EXPECT_EQ(s.files_exit_code(), 0);
  EXPECT_EQ(batch_summary_json(s, "x").find("\"exit_code\": 1"), std::string::npos)
      << "a batch whose files all succeeded must not record exit code 1";
  EXPECT_EQ(s.backend, "cuda");
  EXPECT_EQ(s.ok, kFiles);
  EXPECT_EQ(s.workers.size(), static_cast<std::size_t>(2 * count));
  ASSERT_EQ(s.devices.size(), static_cast<std::size_t>(count));
  std::map<int, int> files_on;
  for (const auto& [input, devs] : fake.devices_of) {
    ASSERT_EQ(devs.size(), 1U) << "each file runs on exactly one device";
    ++files_on[devs[0]];
  }
  int total = 0;
  for (int d = 0; d < count; ++d) {
    EXPECT_GT(files_on[d], 0) << "device " << d << " got no file";
    EXPECT_EQ(s.devices[static_cast<std::size_t>(d)].device, d);
    EXPECT_EQ(s.devices[static_cast<std::size_t>(d)].workers, 2);
    EXPECT_EQ(s.devices[static_cast<std::size_t>(d)].files, files_on[d]);
    EXPECT_LE(fake.max_running[d], 2) << "more files in flight than files_per_device on " << d;
    total += files_on[d];
  }
  EXPECT_EQ(total, kFiles);
  for (const BatchFileResult& r : s.files) {
    EXPECT_EQ(fake.devices_of.at(r.item.input).front(), r.device);
    EXPECT_EQ(fs::path(r.item.output).extension(), ".flac");
  }
  const json j = json::parse(read_bytes(s.summary_json));
  ASSERT_EQ(j["devices"].size(), static_cast<std::size_t>(count));
  int json_total = 0;
  for (const json& d : j["devices"])
    json_total += d["files"].get<int>();
  EXPECT_EQ(json_total, kFiles);

  // A listed device only; a device that does not exist is a config error.
  cfg.execution.devices = {count - 1};
  o.force = true;
  fake.devices_of.clear();
  const BatchSummary one = run_batch(cfg, o);
  EXPECT_EQ(one.ok, kFiles);
  for (const auto& [input, devs] : fake.devices_of)
    EXPECT_EQ(devs, std::vector<int>{count - 1});
  cfg.execution.devices = {count};
  EXPECT_THROW((void)run_batch(cfg, o), Error);

  // --backend cpu overrides the devices: CPU workers.
  o.backend = BackendKind::cpu;
  fake.devices_of.clear();
  const BatchSummary cpu = run_batch(cfg, o);
  EXPECT_EQ(cpu.backend, "cpu");
  for (const auto& [input, devs] : fake.devices_of)
    EXPECT_TRUE(devs.empty());
}

INSTANTIATE_TEST_SUITE_P(BatchInjected, BatchDevices, ::testing::Values(1, 2, 3));

// Backend auto with every device (SPEC §10, "keeps every CPU core and every
// GPU busy"): CPU workers take files while the devices are listed, the GPU's
// workers join, and the CPU takes no new file once one holds its lanes.
// The device count comes from an injected, slow lister; the runs are fakes.
class BatchBesideGpus : public ::testing::Test {
protected:
  void SetUp() override {
    std::vector<float> x(2 * 4801);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = 0.25F * static_cast<float>((i * 7919) % 101) / 101.0F;
    std::filesystem::create_directories(dir_.path() / "in");
    for (int i = 0; i < kFiles; ++i)
      test::write_audio((dir_.path() / "in" / ("f" + std::to_string(i) + ".wav")).string(),
                        SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 2, x);
  }
  Config config(const std::string& stage) const {
    return parse_config("version: 1\nsource: {file: p.wav}\nsink: {file: p.flac}\n"
                        "stages:\n  - " +
                            stage +
                            "\nexecution: {backend: auto, threads: 2}\n"
                            "batch: {inputs: [\"" +
                            (dir_.path() / "in").string() +
                            "\"], out_dir: " + (dir_.path() / "out").string() + "}\n",
                        "beside.yaml");
  }
  // Quiet options whose files run as `fake`'s and whose driver lists
  // `devices` at once, counting its calls in `listed`.
  static BatchOptions listing(FakeRuns& fake, std::atomic<int>& listed, int devices) {
    BatchOptions o;
    o.quiet = true;
    o.count_devices = [&listed, devices] {
      ++listed;
      return devices;
    };
    o.runner = [&fake](const Config& c, const RunOptions& ro) { return fake.run(c, ro); };
    return o;
  }
  static constexpr int kFiles = 40;
  TempDir dir_;
};

// Starts and ends of the fake runs, in order, with their devices.
struct RunLog {
  std::mutex mutex;
  std::vector<std::pair<int, bool>> events; // device, true = start
  void add(int device, bool start) {
    std::lock_guard lock(mutex);
    events.emplace_back(device, start);
  }
};

TEST_F(BatchBesideGpus, CpuWorkersRunWhileTheDevicesAreListedThenTheGpuTakesOver) {
  FakeRuns fake;
  // Long enough a batch (~1.2 s on the two CPU workers) for a context to pay.
  fake.sleep_ms = 60;
  RunLog log;
  BatchOptions o;
  o.quiet = true;
  o.files_per_device = 2;
  o.cpu_file_estimate = [](const Plan&) { return 0.06; }; // what a fake run costs
  // The devices are "listed" once the CPU has done four files.
  o.count_devices = [&] {
    for (int i = 0; i < 10000 && fake.calls.load() < 6; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return 1;
  };
  // A context that takes longer than the CPU's files in flight: the batch
  // waits for the GPU's workers, no file is left out.
  o.start_device = [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(80)); };
  o.runner = [&](const Config& c, const RunOptions& ro) {
    const int d = c.execution.devices.empty() ? -1 : c.execution.devices.front();
    EXPECT_EQ(c.execution.backend, d < 0 ? BackendKind::cpu : BackendKind::cuda);
    log.add(d, true);
    RunReport r = fake.run(c, ro);
    log.add(d, false);
    return r;
  };
  const BatchSummary s = run_batch(config("{type: gain, name: g, db: -3}"), o);

  EXPECT_EQ(s.exit_code(), 0);
  EXPECT_EQ(s.ok, kFiles);
  EXPECT_EQ(s.backend, "auto");
  std::map<int, int> files_on;
  for (const auto& [input, devs] : fake.devices_of)
    ++files_on[devs.empty() ? -1 : devs.front()];
  EXPECT_GE(files_on[-1], 6) << "the CPU runs files while the devices are listed";
  EXPECT_GE(files_on[0], 1) << "the GPU joins";
  EXPECT_EQ(files_on[-1] + files_on[0], kFiles);
  EXPECT_EQ(fake.calls.load(), kFiles) << "each file runs once";
  ASSERT_EQ(s.devices.size(), 2U);
  EXPECT_EQ(s.devices[0].device, -1);
  EXPECT_EQ(s.devices[1].device, 0);
  EXPECT_EQ(s.devices[0].files + s.devices[1].files, kFiles);
  for (const BatchFileResult& r : s.files)
    EXPECT_EQ(r.device, fake.devices_of.at(r.item.input).empty()
                            ? -1
                            : fake.devices_of.at(r.item.input).front());
  // Once the GPU's first file ended (its lanes held), a CPU worker starts at
  // most the file it had already taken: two workers, two files.
  int cpu_starts_after = 0;
  bool gpu_done = false;
  for (const auto& [d, start] : log.events) {
    if (d >= 0 && !start)
      gpu_done = true;
    if (gpu_done && d < 0 && start)
      ++cpu_starts_after;
  }
  EXPECT_LE(cpu_starts_after, 2);
}

TEST_F(BatchBesideGpus, ABatchTheCpuFinishesDoesNotWaitForTheDriver) {
  FakeRuns fake;
  auto driver = std::make_shared<std::promise<void>>();
  std::atomic<int> listed{0};
  BatchOptions o;
  o.quiet = true;
  o.detach_device_start = true;
  // Files the CPU helps with, a batch too long for the CPU alone (40 x 0.06 s
  // on 2 threads): the devices are listed beside the CPU workers.
  o.cpu_file_estimate = [](const Plan&) { return 0.06; };
  // A driver that never comes up while the batch runs.
  o.count_devices = [&listed, up = driver->get_future().share()] {
    ++listed;
    up.wait();
    return 1;
  };
  o.runner = [&](const Config& c, const RunOptions& ro) { return fake.run(c, ro); };
  const BatchSummary s = run_batch(config("{type: gain, name: g, db: -3}"), o);
  const int listed_before_the_driver_came_up = listed.load();
  driver->set_value(); // the left thread ends without touching the batch
  EXPECT_EQ(listed_before_the_driver_came_up, 1) << "the devices were being listed";
  EXPECT_EQ(s.ok, kFiles);
  ASSERT_EQ(s.devices.size(), 1U);
  EXPECT_EQ(s.devices[0].device, -1);
  EXPECT_EQ(s.devices[0].files, kFiles);
  for (const auto& [input, devs] : fake.devices_of)
    EXPECT_TRUE(devs.empty()) << input;
}

// A batch whose files the CPU threads end before a GPU's start would pay
// (40 files of ~0.1 ms on 2 threads) runs on the CPU alone: the driver is
// not even asked for its devices.
TEST_F(BatchBesideGpus, ABatchTheCpuAloneEndsFirstStartsNoDevice) {
  FakeRuns fake;
  std::atomic<int> started{0}, listed{0};
  BatchOptions o = listing(fake, listed, 2);
  o.start_device = [&](int) { ++started; };
  const BatchSummary s = run_batch(config("{type: gain, name: g, db: -3}"), o);
  EXPECT_EQ(s.ok, kFiles);
  EXPECT_EQ(s.backend, "auto") << "the record says auto, whatever ran the files";
  ASSERT_EQ(s.devices.size(), 1U);
  EXPECT_EQ(s.devices[0].device, -1);
  EXPECT_EQ(s.devices[0].workers, 2);
  EXPECT_EQ(started.load(), 0);
  EXPECT_EQ(listed.load(), 0) << "the driver is not asked";
  for (const auto& [input, devs] : fake.devices_of)
    EXPECT_TRUE(devs.empty()) << input;
}

TEST_F(BatchBesideGpus, NoDeviceLeavesEveryFileToTheCpu) {
  FakeRuns fake;
  std::atomic<int> listed{0};
  BatchOptions o = listing(fake, listed, 0);
  o.cpu_file_estimate = [](const Plan&) { return 0.06; }; // not the CPU alone: list
  const BatchSummary s = run_batch(config("{type: gain, name: g, db: -3}"), o);
  EXPECT_EQ(listed.load(), 1);
  EXPECT_EQ(s.ok, kFiles);
  ASSERT_EQ(s.devices.size(), 1U);
  EXPECT_EQ(s.devices[0].files, kFiles);
}

// `--backend cpu` never asks the driver (its start was most of a short CPU
// batch on a 4-GPU host).
TEST_F(BatchBesideGpus, ACpuBatchDoesNotAskTheDriver) {
  FakeRuns fake;
  std::atomic<int> listed{0};
  BatchOptions o = listing(fake, listed, 2);
  o.backend = BackendKind::cpu;
  const BatchSummary s = run_batch(config("{type: gain, name: g, db: -3}"), o);
  EXPECT_EQ(listed.load(), 0);
  EXPECT_EQ(s.ok, kFiles);
  EXPECT_EQ(s.backend, "cpu");
  ASSERT_EQ(s.devices.size(), 1U);
  EXPECT_EQ(s.devices[0].device, -1);
}

TEST_F(BatchBesideGpus, FilesTooLongForTheCpuGoToTheGpusOnly) {
  // 65,536 taps by the direct method: ~0.1 s of one core for each 0.1 s
  // file, ~3 s for the largest (3 s).
  test::write_audio((dir_.path() / "in" / "long.wav").string(), SF_FORMAT_WAV | SF_FORMAT_PCM_16,
                    48000, 2, std::vector<float>(2 * 144000, 0.125F));
  FakeRuns fake;
  BatchOptions o;
  o.quiet = true;
  o.files_per_device = 2;
  o.count_devices = [] { return 2; };
  o.runner = [&](const Config& c, const RunOptions& ro) { return fake.run(c, ro); };
  const BatchSummary s = run_batch(
      config("{type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 65536}, "
             "method: direct}"),
      o);
  EXPECT_EQ(s.ok, kFiles + 1);
  EXPECT_EQ(s.backend, "auto");
  for (const auto& [input, devs] : fake.devices_of)
    ASSERT_EQ(devs.size(), 1U) << input << " ran on the CPU";
  ASSERT_EQ(s.devices.size(), 2U);
  EXPECT_EQ(s.devices[0].device, 0);
}

// With narrow_visible_devices (the CLI's batch) CUDA_VISIBLE_DEVICES is cut
// before the driver is asked: to one GPU for light files under auto and
// CUDA (the list's lowest where one is given); for heavier files to as many
// GPUs as the batch's GPU work pays the start of (gpus_that_pay: 40 files of
// 0.05 s on one GPU pay for two, of 0.001 s for one), the lowest-numbered of
// a list; left as it was where the GPU work cannot be told, for the CPU
// backend, and without the option (Python). A given variable keeps its own
// entries.
TEST_F(BatchBesideGpus, TheDriverSeesOneGpuForLightFilesAndTheGpusThatPay) {
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::optional<std::string> saved =
      before ? std::optional<std::string>(before) : std::nullopt;
  constexpr double kUnknown = std::numeric_limits<double>::infinity();
  struct Case {
    const char* what;
    std::optional<BackendKind> backend;
    std::vector<int> devices;
    double file_s;     // on one CPU thread
    double gpu_file_s; // on one GPU
    bool narrow;
    const char* start;    // CUDA_VISIBLE_DEVICES before (nullptr: unset)
    const char* want;     // after (nullptr: unset)
    std::vector<int> ran; // the devices the files ran on (empty: not checked)
    bool choose = true;   // BatchOptions::choose_gpus (false: SIGSTREAM_ALL_GPUS=1)
  };
  const std::vector<Case> cases = {
      {"auto, light", std::nullopt, {}, 0.06, 0.05, true, nullptr, "0", {}},
      {"auto, light, given", std::nullopt, {}, 0.06, 0.05, true, "5,4,6", "5", {}},
      {"auto, heavy, unknown", std::nullopt, {}, 5.0, kUnknown, true, "5,4,6", "5,4,6", {}},
      {"auto, heavy, two pay", std::nullopt, {}, 5.0, 0.05, true, "5,4,6", "5,4", {}},
      {"cuda, light", BackendKind::cuda, {}, 0.06, 0.05, true, "5,4,6", "5", {}},
      {"cuda, heavy, unknown", BackendKind::cuda, {}, 5.0, kUnknown, true, nullptr, nullptr, {}},
      {"cuda, heavy, two pay", BackendKind::cuda, {}, 5.0, 0.05, true, nullptr, "0,1", {0, 1}},
      {"cuda, heavy, one pays", BackendKind::cuda, {}, 5.0, 0.001, true, "5,4,6", "5", {}},
      {"cuda, named, all pay", BackendKind::cuda, {1, 0}, 5.0, 1.0, true, "5,4,6", "5,4", {1, 0}},
      {"cuda, named, one pays", BackendKind::cuda, {1, 0}, 5.0, 0.001, true, "5,4,6", "5", {0}},
      // The two lowest of four listed, in the list's order: 3 and 2 are never asked for.
      {"cuda, named, two pay",
       BackendKind::cuda,
       {3, 1, 0, 2},
       5.0,
       0.05,
       true,
       nullptr,
       "0,1",
       {1, 0}},
      {"auto, named, light", std::nullopt, {1, 0, 1}, 0.06, 0.05, true, "5,4,6", "5", {0}},
      // Kept GPU 2 alone, the driver sees 0..2 (0.6 x 3 + 1.0 s); GPUs 2,3: 0..3 (0.6 x 4 + 0.5).
      {"cuda, named high, one pays",
       BackendKind::cuda,
       {3, 2},
       5.0,
       0.025,
       true,
       "5,4,6,7",
       "5,4,6",
       {2}},
      {"cuda, named high, two pay",
       BackendKind::cuda,
       {3, 2},
       5.0,
       0.05,
       true,
       "5,4,6,7,8",
       "5,4,6,7",
       {}},
      // SIGSTREAM_ALL_GPUS=1: the list's highest, the default list every GPU, as before.
      {"cuda, named, every one",
       BackendKind::cuda,
       {1, 0},
       0.06,
       0.001,
       true,
       "5,4,6",
       "5,4",
       {1, 0},
       false},
      {"cuda, every one", BackendKind::cuda, {}, 5.0, 0.05, true, "5,4,6", "5,4,6", {}, false},
      {"auto, named one", std::nullopt, {1}, 0.06, 0.05, true, nullptr, "0,1", {1}},
      {"cpu", BackendKind::cpu, {1}, 0.06, 0.05, true, "5,4,6", "5,4,6", {}},
      {"not the process's own", std::nullopt, {}, 0.06, 0.05, false, "5,4,6", "5,4,6", {}},
  };
  for (const Case& k : cases) {
    if (k.start != nullptr)
      ::setenv("CUDA_VISIBLE_DEVICES", k.start, 1);
    else
      ::unsetenv("CUDA_VISIBLE_DEVICES");
    FakeRuns fake;
    std::atomic<int> listed{0};
    BatchOptions o = listing(fake, listed, 2);
    // What the driver would have seen, taken as it is asked; it finds the
    // GPUs the variable names (four where it is unset).
    std::optional<std::string> asked_with;
    o.count_devices = [&] {
      ++listed;
      const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
      if (v == nullptr)
        return 4;
      asked_with = v;
      return static_cast<int>(std::count(v, v + std::strlen(v), ',')) + 1;
    };
    o.backend = k.backend;
    o.force = true;
    o.narrow_visible_devices = k.narrow;
    o.choose_gpus = k.choose;
    o.cpu_file_estimate = [f = k.file_s](const Plan&) { return f; };
    o.gpu_file_estimate = [f = k.gpu_file_s](const Plan&) { return f; };
    std::vector<std::string> lines;
    o.quiet = false;
    o.log = [&lines](const std::string& m) { lines.push_back(m); };
    Config c = config("{type: gain, name: g, db: -3}");
    c.execution.devices = k.devices;
    const BatchSummary s = run_batch(c, o);
    EXPECT_EQ(s.ok, kFiles) << k.what;
    const char* now = std::getenv("CUDA_VISIBLE_DEVICES");
    if (k.want == nullptr) {
      EXPECT_EQ(now, nullptr) << k.what << ": " << now;
      EXPECT_EQ(asked_with, std::nullopt) << k.what;
    } else {
      EXPECT_STREQ(now, k.want) << k.what;
      if (k.backend != BackendKind::cpu) {
        EXPECT_EQ(listed.load(), 1) << k.what;
        EXPECT_EQ(asked_with, std::optional<std::string>(k.want)) << k.what;
      }
    }
    if (!k.ran.empty()) {
      std::vector<int> ran;
      for (const auto& d : s.devices)
        ran.push_back(d.device);
      EXPECT_EQ(ran, k.ran) << k.what;
    }
    // A list cut says so, with what the files weigh.
    const bool cut = !k.ran.empty() && k.ran.size() < k.devices.size() && k.devices.size() > 1;
    const auto said = std::find_if(lines.begin(), lines.end(), [](const std::string& m) {
      return m.find(" listed: ") != std::string::npos;
    });
    EXPECT_EQ(said != lines.end(), cut) << k.what;
    if (cut && said != lines.end()) {
      EXPECT_NE(said->find(k.file_s < 0.6 ? "light files" : "of GPU work"), std::string::npos)
          << *said;
    }
  }
  // A shard of light files keeps every GPU (shards side by side on one host
  // would all land on GPU 0).
  ::setenv("CUDA_VISIBLE_DEVICES", "5,4,6", 1);
  {
    FakeRuns fake;
    std::atomic<int> listed{0};
    BatchOptions o = listing(fake, listed, 2);
    o.force = true;
    o.narrow_visible_devices = true;
    o.cpu_file_estimate = [](const Plan&) { return 0.06; };
    o.shard = BatchShard{0, 2};
    const BatchSummary s = run_batch(config("{type: gain, name: g, db: -3}"), o);
    EXPECT_EQ(s.ok, kFiles / 2);
    EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "5,4,6");
  }
  if (saved)
    ::setenv("CUDA_VISIBLE_DEVICES", saved->c_str(), 1);
  else
    ::unsetenv("CUDA_VISIBLE_DEVICES");
}

// Files in flight per GPU (auto_files_per_device): uncompressed files the
// GPU bounds (gpu_bound_file: its estimate per sample read or written at
// kGpuBoundSecondsPerHostSample or more) run 8 a GPU, others as many as the CPU
// threads over the GPUs allow (16 a GPU here); --files-per-device overrides
// both, and the estimate is then not made. It is made where no earlier step
// needed it (no narrowing of the driver's GPUs: Python's batch).
TEST_F(BatchBesideGpus, FilesTheGpuBoundsRunFewerAGpu) {
  // The rule: never more than the CPU threads allow.
  EXPECT_EQ(auto_files_per_device(64, 4, true), 8);
  EXPECT_EQ(auto_files_per_device(64, 4, false), 16);
  EXPECT_EQ(auto_files_per_device(8, 2, true), 4);
  EXPECT_EQ(auto_files_per_device(64, 1, false), 16);
  // A batch takes it from its largest file's estimate. execution.threads may
  // be at most 4 a hardware thread: 16 (16 a GPU on one) needs 4 of them.
  if (hardware_threads() < 4)
    GTEST_SKIP() << "the batch's part needs 4 hardware threads (16 a GPU against 8)";
  const double samples = 4801.0 * 2; // the fixture's files, 16-bit WAV
  const auto workers = [&](double seconds_per_sample, int per_device, int* estimates,
                           const char* sink = "p.wav") {
    FakeRuns fake;
    std::atomic<int> listed{0};
    BatchOptions o = listing(fake, listed, 1);
    o.backend = BackendKind::cuda;
    o.force = true;
    o.files_per_device = per_device;
    o.gpu_file_estimate = [f = samples * seconds_per_sample, estimates](const Plan&) {
      ++*estimates;
      return f;
    };
    Config c = config("{type: gain, name: g, db: -3}");
    c.execution.threads = 16;
    c.sink.file = sink;
    const BatchSummary s = run_batch(c, o);
    EXPECT_EQ(s.ok, kFiles);
    return static_cast<int>(s.workers.size());
  };
  int made = 0;
  EXPECT_EQ(workers(2.6e-9, 0, &made), 8);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(workers(0.2e-9, 0, &made), 16);
  EXPECT_EQ(workers(std::numeric_limits<double>::infinity(), 0, &made), 16); // unknown
  EXPECT_EQ(workers(2.6e-9, 0, &made, "p.flac"), 16); // a compressed output: the host's work
  made = 0;
  EXPECT_EQ(workers(2.6e-9, 12, &made), 12);
  EXPECT_EQ(made, 0); // the user's count: no estimate
}

// The GPUs are chosen for the files left to run: a re-run whose files are
// all up to date does not ask the driver, where the first saw two GPUs. And
// auto with a list, where the driver finds no GPU, runs every file on the
// CPU under the CPU's fingerprint, saying nothing of a cut list.
TEST_F(BatchBesideGpus, TheGpusAreChosenForTheFilesLeftAndAutoFindingNoneUsesTheCpu) {
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::optional<std::string> saved =
      before ? std::optional<std::string>(before) : std::nullopt;
  const auto run = [&](bool force, std::optional<BackendKind> backend, std::vector<int> devices,
                       int found, std::vector<std::string>* lines) {
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    FakeRuns fake;
    std::atomic<int> listed{0};
    BatchOptions o = listing(fake, listed, found);
    o.backend = backend;
    o.force = force;
    o.narrow_visible_devices = true;
    o.cpu_file_estimate = [](const Plan&) { return 5.0; };
    o.gpu_file_estimate = [](const Plan&) { return 0.05; }; // 40 files: 2 s, two GPUs
    if (lines != nullptr) {
      o.quiet = false;
      o.log = [lines](const std::string& m) { lines->push_back(m); };
    }
    Config c = config("{type: gain, name: g, db: -3}");
    c.execution.devices = std::move(devices);
    const BatchSummary s = run_batch(c, o);
    const char* now = std::getenv("CUDA_VISIBLE_DEVICES");
    return std::make_tuple(s, std::string(now != nullptr ? now : "(unset)"), listed.load());
  };
  const auto [first, first_seen, first_asked] = run(true, BackendKind::cuda, {}, 2, nullptr);
  EXPECT_EQ(first.ok, kFiles);
  EXPECT_EQ(first_seen, "0,1");
  EXPECT_EQ(first_asked, 1);
  // Auto with a list (its fingerprint CUDA's, as where the driver finds GPUs).
  std::vector<std::string> again_lines;
  const auto [again, again_seen, again_asked] = run(false, std::nullopt, {0, 1}, 2, &again_lines);
  EXPECT_EQ(again.skipped, kFiles);
  EXPECT_EQ(again_seen, "(unset)");
  EXPECT_EQ(again_asked, 0);
  EXPECT_EQ(again.exit_code(), 0);
  EXPECT_EQ(again.backend, "cuda");
  EXPECT_TRUE(again.devices.empty()); // none asked, none named
  for (const std::string& m : again_lines)
    EXPECT_EQ(m.find("using the CPU backend"), std::string::npos) << m;
  // A quarter of the files left: 0.5 s of GPU work, one GPU.
  int removed = 0;
  for (const auto& e : fs::directory_iterator(dir_.path() / "out"))
    if (e.path().extension() == ".json" && e.path().stem() != "batch_summary" && removed < 10) {
      fs::remove(e.path());
      ++removed;
    }
  ASSERT_EQ(removed, 10);
  const auto [part, part_seen, part_asked] = run(false, BackendKind::cuda, {}, 2, nullptr);
  EXPECT_EQ(part.skipped, kFiles - 10);
  EXPECT_EQ(part.ok, 10);
  EXPECT_EQ(part_seen, "0");
  EXPECT_EQ(part_asked, 1);

  // Outputs the CPU made, then auto with a list whose driver finds no GPU:
  // checked under the CPU's fingerprint, up to date, said once.
  const auto [by_cpu, seen, asked] = run(true, BackendKind::cpu, {}, 0, nullptr);
  EXPECT_EQ(by_cpu.ok, kFiles);
  std::vector<std::string> lines;
  const auto [cpu, cpu_seen, cpu_asked] = run(false, std::nullopt, {3, 1, 0, 2}, 0, &lines);
  EXPECT_EQ(cpu.backend, "cpu");
  EXPECT_EQ(cpu.skipped, kFiles);
  EXPECT_EQ(cpu_seen, "0,1");
  for (const std::string& m : lines) {
    EXPECT_EQ(m.find(" listed: "), std::string::npos) << m;
    EXPECT_EQ(m.find("another config"), std::string::npos) << m;
  }
  // And forced: every file on the CPU, its records the CPU's.
  const auto [cpu_forced, forced_seen, forced_asked] =
      run(true, std::nullopt, {3, 1, 0, 2}, 0, nullptr);
  EXPECT_EQ(cpu_forced.backend, "cpu");
  EXPECT_EQ(cpu_forced.ok, kFiles);
  const auto [cpu_again, again_cpu_seen, again_cpu_asked] =
      run(false, BackendKind::cpu, {}, 0, nullptr);
  EXPECT_EQ(cpu_again.skipped, kFiles);
  if (saved)
    ::setenv("CUDA_VISIBLE_DEVICES", saved->c_str(), 1);
  else
    ::unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST(BatchDevicesNone, CudaWithoutADeviceIsAnErrorAndAutoFallsBackToTheCpu) {
  TempDir dir;
  write_text(dir.path() / "in" / "x.wav", "x");
  Config cfg = parse_config(
      "version: 1\nsource: {file: p.wav}\nsink: {file: p.wav}\nexecution: {backend: cuda}\n"
      "batch: {inputs: [\"" +
          (dir.path() / "in").string() + "\"], out_dir: " + (dir.path() / "out").string() + "}\n",
      "none.yaml");
  FakeRuns fake;
  BatchOptions o;
  o.quiet = true;
  o.device_count_override = 0;
  o.runner = [&](const Config& c, const RunOptions& ro) { return fake.run(c, ro); };
  try {
    (void)run_batch(cfg, o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cuda);
  }
  EXPECT_EQ(fake.calls.load(), 0);
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  cfg.execution.backend = BackendKind::automatic;
  const BatchSummary s = run_batch(cfg, o);
  EXPECT_EQ(s.backend, "cpu");
  EXPECT_EQ(s.ok, 1);
}

TEST(BatchInterrupt, AnInterruptedFileStopsTheBatchWithExit130) {
  TempDir dir;
  for (int i = 0; i < 10; ++i)
    write_text(dir.path() / "in" / ("f" + std::to_string(i) + ".wav"), "x");
  const Config cfg = parse_config("version: 1\nsource: {file: p.wav}\nsink: {file: p.wav}\n"
                                  "execution: {backend: cpu, threads: 1}\nbatch: {inputs: [\"" +
                                      (dir.path() / "in").string() +
                                      "\"], out_dir: " + (dir.path() / "out").string() + "}\n",
                                  "interrupt.yaml");
  FakeRuns fake;
  fake.interrupt_at = (dir.path() / "in" / "f3.wav").string();
  BatchOptions o;
  o.quiet = true;
  o.runner = [&](const Config& c, const RunOptions& ro) { return fake.run(c, ro); };
  const BatchSummary s = run_batch(cfg, o);
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.exit_code(), 130);
  EXPECT_EQ(s.interrupted_files, 1);
  EXPECT_EQ(s.ok, 3); // one worker, equal sizes: input order
  EXPECT_EQ(s.not_run, 6);
  const json j = json::parse(read_bytes(s.summary_json));
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_EQ(j["counts"]["interrupted"], 1);
  EXPECT_EQ(j["files"][3]["status"], "interrupted");
  EXPECT_EQ(j["files"][4]["status"], "not_run");

  // The re-run resumes: the three done are skipped, the rest run.
  fake.interrupt_at.clear();
  const BatchSummary resumed = run_batch(cfg, o);
  EXPECT_EQ(resumed.skipped, 3);
  EXPECT_EQ(resumed.ok, 7);
  EXPECT_EQ(resumed.exit_code(), 0);
}

// The summary's text is made in runs of files on several threads and spliced
// into its head: it must be the object's own two-space dump, entries in
// input order, for 0, 1 and many files (whole runs and more), on 1, 3 and 8
// threads, with every kind of entry; and the CSV's rows those of each file alone.
TEST(BatchSummaryText, TheSplicedTextIsTheObjectsDump) {
  const auto summary = [](std::size_t n) {
    BatchSummary s;
    s.out_dir = "out dir/\"q\"";
    s.backend = "cuda";
    s.shard = BatchShardRecord{{2, 7}, "ab12", "cd34", 3 * n + 1};
    s.workers = {{0, 2}, {-1, 3}};
    s.devices = {{0, 2, 5, 1, 1234, 0.5}, {-1, 3, 7, 0, 99, 1.25}};
    std::mt19937 rng(11);
    for (std::size_t i = 0; i < n; ++i) {
      BatchFileResult f;
      f.item.input = "in/f" + std::to_string(i) + (i % 13 == 0 ? "\u00e9\t\"x\".wav" : ".wav");
      f.item.output = i % 5 == 0 ? "" : "out/f" + std::to_string(i) + ".flac";
      f.item.stats_json = "out/f" + std::to_string(i) + ".json";
      f.item.bytes = rng() % 100000;
      f.status = static_cast<BatchStatus>(rng() % 5);
      f.outputs_written = rng() % 3 != 0;
      if (rng() % 4 != 0) {
        f.sample_rate = i % 7 == 0 ? 44100.5 : 48000.0;
        f.channels = 1 + static_cast<int>(rng() % 6);
        f.frames = rng() % 1000000;
        f.output_frames = f.frames / 2 + 1;
      }
      if (f.status == BatchStatus::failed)
        f.error = "line one\nline \"two\"";
      f.backend = i % 2 ? "cuda" : "cpu";
      f.device = i % 2 ? static_cast<int>(i % 4) : -1;
      f.device_name = i % 2 ? "NVIDIA H200" : "";
      f.wall_s = static_cast<double>(rng() % 1000) / 997.0;
      f.clipped_samples = rng() % 3;
      f.nonfinite = rng() % 2;
      for (int c = 0; c < f.channels; ++c) {
        f.output_rms.push_back(static_cast<double>(rng()) / 4294967296.0);
        f.output_peak.push_back(static_cast<double>(rng()) / 3e9);
      }
      if (i % 3 == 0) {
        f.integrated_lufs = -23.0 - static_cast<double>(i % 10) / 7.0;
        f.true_peak_dbtp = -1.0 / static_cast<double>(i + 1);
      }
      f.verification_ran = i % 11 == 0;
      f.rel_l2_error = 1e-7 * static_cast<double>(i);
      s.files.push_back(std::move(f));
    }
    return s;
  };
  for (const std::size_t n : {0UL, 1UL, 512UL, 513UL, 1024UL, 2049UL})
    for (const int threads : {1, 3, 8}) {
      const BatchSummary s = summary(n);
      const std::string text = batch_summary_json(s, "fp", threads);
      const std::string dump = batch_summary_object(s, "fp").dump(2) + "\n";
      const auto differ = std::mismatch(text.begin(), text.end(), dump.begin(), dump.end());
      EXPECT_TRUE(text == dump) << n << " files, " << threads
                                << " threads: the texts differ from byte "
                                << (differ.first - text.begin()) << " ('"
                                << text.substr(
                                       static_cast<std::size_t>(differ.first - text.begin()), 40)
                                << "')";
      const json j = json::parse(text);
      ASSERT_EQ(j["files"].size(), n);
      if (n > 0) {
        EXPECT_EQ(j["files"].back()["file"], s.files.back().item.input);
      }

      const std::string csv = batch_summary_csv(s, threads);
      std::string rows = csv.substr(0, csv.find('\n') + 1);
      for (const BatchFileResult& f : s.files) {
        BatchSummary one;
        one.files = {f};
        const std::string alone = batch_summary_csv(one);
        rows += alone.substr(alone.find('\n') + 1);
      }
      EXPECT_EQ(csv, rows) << n << " files, " << threads << " threads";
    }
}

// Where the process may not make the threads asked for (a pids or process
// limit; here an address-space limit that leaves room for about two thread
// stacks), a pool runs on those it got and the summary is still made, the
// same text: no hang in the pool's half-made members, no exception past it.
// (In a child process: the limit stays there. Not under ASan, whose shadow
// memory an address-space limit does not leave room for.)
TEST(BatchSummaryText, AProcessShortOfThreadsStillMakesTheSummary) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an address-space limit and ASan's shadow memory do not mix";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "an address-space limit and ASan's shadow memory do not mix";
#endif
#endif
  BatchSummary s;
  s.backend = "cpu";
  for (int i = 0; i < 3000; ++i) {
    BatchFileResult f;
    f.item.input = "in/f" + std::to_string(i) + ".wav";
    f.status = BatchStatus::ok;
    f.channels = 2;
    f.sample_rate = 48000;
    f.frames = 1000 + i;
    s.files.push_back(std::move(f));
  }
  const std::string want = batch_summary_object(s, "fp").dump(2) + "\n";
  const std::string want_csv = batch_summary_csv(s, 1);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto child = [&] {
    std::ifstream statm("/proc/self/statm");
    long pages = 0;
    statm >> pages;
    const auto page = static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
    // Room for the texts (a few MB) and ~2 default stacks (8 MiB each), not 16.
    const rlim_t limit = static_cast<rlim_t>(pages) * page + (40U << 20U);
    const rlimit r{limit, limit};
    if (setrlimit(RLIMIT_AS, &r) != 0)
      std::_Exit(3);
    bool fewer = false;
    try {
      ThreadPool pool(16);
      fewer = pool.size() < 16;
    } catch (const std::system_error&) {
      fewer = true; // none at all: for_runs then runs on this thread
    }
    const bool same =
        batch_summary_json(s, "fp", 16) == want && batch_summary_csv(s, 16) == want_csv;
    std::_Exit(!fewer ? 4 : same ? 0 : 5);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "")
      << "exit 3: no limit set; 4: the limit left room for 16 threads (the test proves nothing); "
         "5: the summary differed";
}

} // namespace
} // namespace sigstream

// A batch's next GPU starts only when the work left, at the running devices'
// rate, lasts more than twice the last start (pipeline/backend_choice.cpp).
TEST(BatchDevices, ANextDeviceStartsOnlyWhenTheWorkLeftPaysForIt) {
  // 10% done in 0.1 s: 0.9 s left.
  EXPECT_TRUE(sigstream::next_device_pays(0.3, 0.1, 10.0, 100.0));   // 0.9 > 0.6
  EXPECT_FALSE(sigstream::next_device_pays(0.5, 0.1, 10.0, 100.0));  // 0.9 < 1.0
  EXPECT_FALSE(sigstream::next_device_pays(0.45, 0.1, 10.0, 100.0)); // exactly twice: not more
  // Half done in 0.4 s of a long batch, and a context of 1.1 s: 0.4 s left.
  EXPECT_FALSE(sigstream::next_device_pays(1.1, 0.4, 5e8, 1e9));
  // A GPU-bound batch: 2% in 0.2 s, 9.8 s left against a 0.3 s start.
  EXPECT_TRUE(sigstream::next_device_pays(0.3, 0.2, 2.0, 100.0));
  // Nothing measured yet: work left may pay; none left never does.
  EXPECT_TRUE(sigstream::next_device_pays(0.3, 0.0, 0.0, 100.0));
  EXPECT_FALSE(sigstream::next_device_pays(0.3, 0.5, 100.0, 100.0));
  EXPECT_FALSE(sigstream::next_device_pays(0.0, 0.0, 0.0, 0.0));
}

TEST(BatchDevices, BesideTheCpuTheFirstGpuStartsWhenItsContextPays) {
  // 4 x H100, 800 files: a third done when the driver was up (0.9 s), 1.8 s
  // left against a context of 0.3 s: start. Most done: the CPU ends it.
  EXPECT_TRUE(sigstream::first_device_pays(0.9, 280.0, 800.0));
  EXPECT_FALSE(sigstream::first_device_pays(0.9, 700.0, 800.0));
  // A file of 0.04 s on one core helps; one of 18 s (65,536 taps direct) does not.
  EXPECT_TRUE(sigstream::batch_cpu_helps(0.039));
  EXPECT_FALSE(sigstream::batch_cpu_helps(18.1));
  EXPECT_FALSE(sigstream::batch_cpu_helps(std::numeric_limits<double>::infinity()));
  // 800 files of 0.039 s on 64 threads (0.49 s): the CPU alone; on 16 (1.95 s): not.
  EXPECT_TRUE(sigstream::batch_cpu_alone_finishes(800 * 0.039 / 64));
  EXPECT_FALSE(sigstream::batch_cpu_alone_finishes(800 * 0.039 / 16));
  EXPECT_FALSE(sigstream::batch_cpu_alone_finishes(std::numeric_limits<double>::infinity()));
}
