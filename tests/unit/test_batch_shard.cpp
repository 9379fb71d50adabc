// Shards of a batch (pipeline/batch_shard.hpp): shard selection, --shard and
// Slurm array parsing, input lists, SHA-256, and merging real shard summaries
// against the summary of one plain batch over the same files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sndfile.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/batch_shard.hpp"
#include "pipeline/config.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::TempDir;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The message of the Error(config) that `f` throws ("" if none).
template <class F> std::string config_message(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config) << e.what();
    return e.what();
  }
  return "";
}

std::vector<BatchItem> numbered_items(std::size_t n) {
  std::vector<BatchItem> items(n);
  for (std::size_t k = 0; k < n; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "in/f%03zu.wav", k);
    items[k].input = name;
  }
  return items;
}

TEST(BatchShard, SelectionIsDisjointCompleteAndBalanced) {
  for (std::size_t total = 0; total <= 50; ++total) {
    const std::vector<BatchItem> items = numbered_items(total);
    for (int n = 1; n <= 9; ++n) {
      std::multiset<std::string> seen;
      std::size_t smallest = total + 1, largest = 0;
      for (int i = 0; i < n; ++i) {
        const std::vector<BatchItem> part = select_batch_shard(items, {i, n});
        smallest = std::min(smallest, part.size());
        largest = std::max(largest, part.size());
        for (std::size_t k = 0; k < part.size(); ++k) {
          // Position I + k*N of the list, in order.
          ASSERT_EQ(part[k].input,
                    items[static_cast<std::size_t>(i) + k * static_cast<std::size_t>(n)].input);
          seen.insert(part[k].input);
        }
      }
      ASSERT_EQ(seen.size(), total) << total << " files, N = " << n;
      ASSERT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), total)
          << "a file in two shards";
      ASSERT_LE(largest - smallest, 1U) << total << " files, N = " << n;
    }
  }
}

TEST(BatchShard, ParsesIOverN) {
  for (auto [text, i, n] : {std::tuple{"0/1", 0, 1},
                            {"3/4", 3, 4},
                            {"0/4", 0, 4},
                            {"8/9", 8, 9},
                            {"12/100", 12, 100}}) {
    const BatchShard s = parse_batch_shard(text, {});
    EXPECT_EQ(s.index, i) << text;
    EXPECT_EQ(s.count, n) << text;
  }
}

TEST(BatchShard, RefusesMalformedShards) {
  for (const char* text : {"3/2",
                           "4/4",
                           "-1/4",
                           "a/b",
                           "1/0",
                           "0/0",
                           "2",
                           "",
                           "/",
                           "1/",
                           "/4",
                           " 1/4",
                           "1/4 ",
                           "+1/4",
                           "1.0/4",
                           "0/-1",
                           "1/2/3",
                           "0x1/4",
                           "99999999999999999999/1",
                           "0/2000000000"}) {
    const std::string m = config_message([&] { (void)parse_batch_shard(text, {}); });
    EXPECT_NE(m.find("--shard"), std::string::npos) << text << ": " << m;
    EXPECT_NE(m.find(std::string("'") + text + "'"), std::string::npos) << "names the text: " << m;
    EXPECT_NE(m.find("I/N"), std::string::npos) << "says what is expected: " << m;
  }
}

ShardEnvironment slurm(long long id, long long min, long long max, long long step,
                       long long count) {
  return {{"SLURM_ARRAY_TASK_ID", std::to_string(id)},
          {"SLURM_ARRAY_TASK_MIN", std::to_string(min)},
          {"SLURM_ARRAY_TASK_MAX", std::to_string(max)},
          {"SLURM_ARRAY_TASK_STEP", std::to_string(step)},
          {"SLURM_ARRAY_TASK_COUNT", std::to_string(count)}};
}

TEST(BatchShard, SlurmArraysEvenlyStepped) {
  // --array=0-3
  for (int id = 0; id <= 3; ++id) {
    const BatchShard s = parse_batch_shard("auto", slurm(id, 0, 3, 1, 4));
    EXPECT_EQ(s.index, id);
    EXPECT_EQ(s.count, 4);
  }
  // --array=1-4%2: the throttle does not show in the variables.
  for (int id = 1; id <= 4; ++id) {
    const BatchShard s = shard_from_slurm(slurm(id, 1, 4, 1, 4));
    EXPECT_EQ(s.index, id - 1);
    EXPECT_EQ(s.count, 4);
  }
  // --array=0-6:2
  for (int id = 0; id <= 6; id += 2) {
    const BatchShard s = shard_from_slurm(slurm(id, 0, 6, 2, 4));
    EXPECT_EQ(s.index, id / 2);
    EXPECT_EQ(s.count, 4);
  }
  // --array=5: one task.
  const BatchShard one = shard_from_slurm(slurm(5, 5, 5, 1, 1));
  EXPECT_EQ(one.index, 0);
  EXPECT_EQ(one.count, 1);
}

TEST(BatchShard, SlurmArraysRefused) {
  // --array=1,3,7: MIN 1, MAX 7, COUNT 3, with step 1 or 2. (With step 3
  // tasks 1 and 7 cannot be told from --array=1-7:3; task 3 is refused.)
  EXPECT_NE(config_message([] {
              (void)shard_from_slurm(slurm(3, 1, 7, 3, 3));
            }).find("not evenly stepped"),
            std::string::npos);
  for (long long step : {1, 2}) {
    for (long long id : {1, 3, 7}) {
      const std::string m =
          config_message([&] { (void)shard_from_slurm(slurm(id, 1, 7, step, 3)); });
      EXPECT_NE(m.find("not evenly stepped"), std::string::npos) << m;
      EXPECT_NE(m.find("SLURM_ARRAY_TASK_COUNT='3'"), std::string::npos) << m;
      EXPECT_NE(m.find("SLURM_ARRAY_TASK_MAX='7'"), std::string::npos) << m;
      EXPECT_NE(m.find("SLURM_ARRAY_TASK_ID='" + std::to_string(id) + "'"), std::string::npos) << m;
    }
  }
  // An id off the step (0-6:2, id 3): said as such, not as a COUNT that
  // matches (COUNT 4 = (6 - 0) / 2 + 1).
  const std::string off = config_message([] { (void)shard_from_slurm(slurm(3, 0, 6, 2, 4)); });
  EXPECT_NE(off.find("not evenly stepped"), std::string::npos) << off;
  EXPECT_NE(off.find("task 3 is not MIN + k x STEP"), std::string::npos) << off;
  EXPECT_EQ(off.find("COUNT is"), std::string::npos) << off;
  // Outside an array.
  const std::string outside = config_message([] { (void)parse_batch_shard("auto", {}); });
  EXPECT_NE(outside.find("not inside a Slurm job array"), std::string::npos) << outside;
  EXPECT_NE(outside.find("SLURM_ARRAY_TASK_ID=(not set)"), std::string::npos) << outside;
  // A variable missing or not a number.
  ShardEnvironment env = slurm(1, 0, 3, 1, 4);
  env.erase("SLURM_ARRAY_TASK_STEP");
  const std::string no_step = config_message([&] { (void)shard_from_slurm(env); });
  EXPECT_NE(no_step.find("SLURM_ARRAY_TASK_STEP is not set"), std::string::npos) << no_step;
  env = slurm(1, 0, 3, 1, 4);
  env["SLURM_ARRAY_TASK_COUNT"] = "four";
  EXPECT_NE(
      config_message([&] { (void)shard_from_slurm(env); }).find("SLURM_ARRAY_TASK_COUNT='four'"),
      std::string::npos);
  // Nonsense: an id outside MIN..MAX, a zero step.
  EXPECT_FALSE(config_message([] { (void)shard_from_slurm(slurm(9, 0, 3, 1, 4)); }).empty());
  EXPECT_FALSE(config_message([] { (void)shard_from_slurm(slurm(1, 0, 3, 0, 4)); }).empty());
}

TEST(BatchShard, WarnsOnlyInsideAnArray) {
  EXPECT_FALSE(unsharded_array_warning({}).has_value());
  const auto w = unsharded_array_warning(slurm(2, 0, 3, 1, 4));
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("every file"), std::string::npos) << *w;
  EXPECT_NE(w->find("--shard auto"), std::string::npos) << *w;
}

TEST(BatchShard, Sha256KnownAnswers) {
  // FIPS 180-2 examples.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(BatchShard, SlurmArrayLists) {
  EXPECT_EQ(slurm_array_list({5, 2}), "2,5");
  EXPECT_EQ(slurm_array_list({7, 0, 1, 2, 3}), "0-3,7");
  EXPECT_EQ(slurm_array_list({4, 5, 9, 10, 11, 13}), "4-5,9-11,13");
  EXPECT_EQ(slurm_array_list({}), "");
}

Config list_config(bool sink, bool csv) {
  std::string y = "version: 1\n"
                  "stages:\n"
                  "  - type: gain\n"
                  "    db: -6\n";
  if (sink)
    y += "sink: {file: x.flac}\n";
  y += csv ? "stats: {json: s.json, csv: s.csv}\n" : "stats: {json: s.json}\n";
  y += "batch: {out_dir: out}\n";
  return parse_config(y, "list-test.yaml", {}, ConfigUse::batch);
}

// --out-dir with a list whose lines fix their outputs elsewhere: said (the
// outputs had gone to the list's folder and only the summary to --out-dir,
// silently). A list under the folder, and lines with the input alone, pass.
TEST(BatchShard, AListsOutputsOutsideOutDirAreSaid) {
  const Config cfg = list_config(true, false);
  const std::vector<BatchItem> fixed = read_batch_input_list(
      cfg, "a/one.wav\tout/batch/one.wav\nb/two.wav\tout/batch/two.wav\n", "L");
  const auto w = list_outputs_outside(fixed, "out/other", "L");
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("outputs of 2 file(s) outside --out-dir 'out/other'"), std::string::npos) << *w;
  EXPECT_NE(w->find("out/batch/one.wav"), std::string::npos) << *w;
  EXPECT_NE(w->find("cut -f1 L |"), std::string::npos) << *w;
  EXPECT_FALSE(list_outputs_outside(fixed, "out/batch", "L"));
  EXPECT_FALSE(list_outputs_outside(fixed, "out/batch/", "L"));
  EXPECT_FALSE(list_outputs_outside(fixed, "out", "L"));
  // "out/bat" is a prefix of the text, not a folder above it.
  EXPECT_TRUE(list_outputs_outside(fixed, "out/bat", "L"));
  EXPECT_FALSE(list_outputs_outside(read_batch_input_list(cfg, "a/one.wav\n", "L"), "x", "L"));
}

TEST(BatchShard, InputListsReadBack) {
  const std::string text = "# made by --list-inputs\n"
                           "\n"
                           "a/one.wav\tres/one.flac\r\n"
                           "   \n"
                           "  # indented comment\n"
                           "b/two.wav\n"
                           "c/three.wav\n";
  const Config cfg = list_config(true, true);
  const std::vector<BatchItem> items =
      finish_batch_items(cfg, read_batch_input_list(cfg, text, "L"), "out");
  ASSERT_EQ(items.size(), 3U);
  EXPECT_EQ(items[0].input, "a/one.wav");
  EXPECT_EQ(items[0].output, "res/one.flac");
  EXPECT_EQ(items[0].stats_json, "res/one.json");
  EXPECT_EQ(items[0].stats_csv, "res/one.csv");
  // Plain paths go straight into out_dir, like plain path inputs.
  EXPECT_EQ(items[1].output, (fs::path("out") / "two.flac").string());
  EXPECT_EQ(items[2].stats_json, (fs::path("out") / "three.json").string());
  // The printed list reads back to the same items.
  const std::string printed = batch_input_list(items);
  EXPECT_EQ(printed,
            "a/one.wav\tres/one.flac\nb/two.wav\tout/two.flac\nc/three.wav\tout/three.flac\n");
  const std::vector<BatchItem> again =
      finish_batch_items(cfg, read_batch_input_list(cfg, printed, "L2"), "elsewhere");
  ASSERT_EQ(again.size(), items.size());
  for (std::size_t k = 0; k < items.size(); ++k) {
    EXPECT_EQ(again[k].input, items[k].input);
    EXPECT_EQ(again[k].output, items[k].output);
    EXPECT_EQ(again[k].stats_json, items[k].stats_json);
    EXPECT_EQ(again[k].stats_csv, items[k].stats_csv);
  }

  // Without sink.file the list's output is the statistics JSON.
  const Config stats_only = list_config(false, false);
  const std::vector<BatchItem> s = read_batch_input_list(stats_only, "x.wav\tr/x.json\n", "L");
  ASSERT_EQ(s.size(), 1U);
  EXPECT_EQ(s[0].output, "");
  EXPECT_EQ(s[0].stats_json, "r/x.json");
  EXPECT_EQ(s[0].stats_csv, "");
  EXPECT_EQ(batch_input_list(s), "x.wav\tr/x.json\n");
}

TEST(BatchShard, InputListsRefused) {
  const Config cfg = list_config(true, false);
  auto refused = [&](const std::string& text) {
    return config_message(
        [&] { (void)finish_batch_items(cfg, read_batch_input_list(cfg, text, "L"), "out"); });
  };
  EXPECT_NE(refused("a.wav\tb.wav\tc.wav\n").find("L:1:"), std::string::npos);
  EXPECT_NE(refused("# c\n\tout.wav\n").find("L:2:"), std::string::npos);
  EXPECT_NE(refused("a.wav\t\n").find("L:1:"), std::string::npos);
  const std::string twice = refused("a.wav\nb.wav\n./a.wav\tx.wav\n");
  EXPECT_NE(twice.find("L:3:"), std::string::npos) << twice;
  EXPECT_NE(twice.find("line 1"), std::string::npos) << twice;
  EXPECT_NE(refused("# nothing\n\n").find("lists no inputs"), std::string::npos);
  // The collision checks of every batch: two outputs alike, an output that is an input.
  EXPECT_NE(refused("a.wav\tr/x.wav\nb.wav\tr/x.wav\n").find("both map to"), std::string::npos);
  EXPECT_NE(refused("a.wav\tb.wav\nb.wav\tc.wav\n").find("would overwrite the input"),
            std::string::npos);
  // A path that cannot be listed.
  BatchItem tab;
  tab.input = "odd\tname.wav";
  tab.stats_json = "o.json";
  EXPECT_NE(config_message([&] { (void)batch_input_list({tab}); }).find("tab"), std::string::npos);
}

// Real batches over a few files: shards, then merges, against one plain batch.
class ShardedBatch : public ::testing::Test {
protected:
  void SetUp() override {
    fs::create_directories(dir_.path() / "in");
    for (int k = 0; k < 7; ++k) {
      const int frames = 1000 + 317 * k;
      const int channels = 1 + k % 2;
      test::write_audio(
          (dir_.path() / "in" / ("f" + std::to_string(k) + ".wav")).string(),
          SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, channels,
          test::random_samples(static_cast<std::size_t>(frames * channels), 40u + k, 0.5f, 16));
    }
    std::ofstream(dir_.path() / "in" / "f9_bad.wav") << "not audio\n";
  }

  [[nodiscard]] Config config(double db = -6) const {
    return parse_config("version: 1\n"
                        "stages:\n"
                        "  - type: fir\n"
                        "    design: {kind: lowpass, cutoff_hz: 2000, taps: 31}\n"
                        "  - type: gain\n"
                        "    db: " +
                            std::to_string(db) +
                            "\n"
                            "sink: {file: x.wav}\n"
                            "stats: {json: s.json, csv: s.csv}\n"
                            "execution: {backend: cpu, threads: 2}\n"
                            "batch:\n"
                            "  inputs: ['" +
                            (dir_.path() / "in").string() +
                            "']\n"
                            "  out_dir: '" +
                            out(0).string() + "'\n",
                        "shard-test.yaml", {}, ConfigUse::batch);
  }

  // run k's output folder
  [[nodiscard]] fs::path out(int k) const { return dir_.path() / ("out" + std::to_string(k)); }

  [[nodiscard]] BatchSummary run(const Config& c, std::optional<BatchShard> shard, int k) const {
    BatchOptions o;
    o.quiet = true;
    o.out_dir = out(k).string();
    o.shard = shard;
    return run_batch(c, o);
  }

  TempDir dir_;
};

TEST_F(ShardedBatch, ShardsMergeIntoThePlainBatchsSummary) {
  const BatchSummary plain = run(config(), std::nullopt, 1);
  ASSERT_EQ(plain.files.size(), 8U);
  ASSERT_EQ(plain.failed, 1);
  const json want = json::parse(read_text(out(1) / "batch_summary.json"));

  std::vector<std::string> texts;
  for (int i = 0; i < 3; ++i) {
    const BatchSummary s = run(config(), BatchShard{i, 3}, 2);
    EXPECT_EQ(s.files.size(), i < 2 ? 3U : 2U);
    ASSERT_TRUE(s.summary_written);
    EXPECT_EQ(fs::path(s.summary_json),
              out(2) / ("batch_summary." + std::to_string(i) + "-of-3.json"));
    EXPECT_TRUE(fs::exists(out(2) / ("batch_summary." + std::to_string(i) + "-of-3.csv")));
    texts.push_back(read_text(s.summary_json));
    const json j = json::parse(texts.back());
    EXPECT_EQ(j["shard"]["index"], i);
    EXPECT_EQ(j["shard"]["count"], 3);
    EXPECT_EQ(j["shard"]["inputs_total"], 8);
    EXPECT_EQ(j["shard"]["inputs_sha256"].get<std::string>().size(), 64U);
    if (i > 0) {
      const json first = json::parse(texts.front());
      EXPECT_EQ(j["shard"]["inputs_sha256"], first["shard"]["inputs_sha256"]);
      EXPECT_EQ(j["shard"]["config_sha256"], first["shard"]["config_sha256"]);
    }
  }
  EXPECT_FALSE(fs::exists(out(2) / "batch_summary.json"));
  // The outputs are the plain batch's, byte for byte.
  for (int k = 0; k < 7; ++k) {
    const std::string name = "f" + std::to_string(k);
    EXPECT_EQ(read_text(out(2) / (name + ".wav")), read_text(out(1) / (name + ".wav"))) << name;
    EXPECT_EQ(read_text(out(2) / (name + ".csv")), read_text(out(1) / (name + ".csv"))) << name;
  }

  EXPECT_EQ(missing_shards(texts), std::vector<int>{});
  EXPECT_EQ(missing_shards({texts[1]}), (std::vector<int>{0, 2}));
  // In any order.
  const json merged =
      json::parse(merge_batch_summaries({texts[2], texts[0], texts[1]}, out(2).string()));
  EXPECT_EQ(merged["shards"], 3);
  EXPECT_EQ(merged["counts"], want["counts"]);
  EXPECT_EQ(merged["exit_code"], 1);
  EXPECT_EQ(merged["out_dir"], out(2).string());
  ASSERT_EQ(merged["files"].size(), want["files"].size());
  for (std::size_t k = 0; k < want["files"].size(); ++k) {
    const json& g = merged["files"][k];
    const json& w = want["files"][k];
    EXPECT_EQ(g["file"], w["file"]);
    EXPECT_EQ(g["status"], w["status"]);
    EXPECT_EQ(fs::path(g["output"].is_null() ? "" : g["output"].get<std::string>()).filename(),
              fs::path(w["output"].is_null() ? "" : w["output"].get<std::string>()).filename());
    for (const char* key :
         {"frames", "channels", "sample_rate", "output_frames", "output_rms", "output_peak"})
      EXPECT_EQ(g[key], w[key]) << key << " of " << w["file"];
  }
  double longest = 0;
  for (const std::string& t : texts)
    longest = std::max(longest, json::parse(t)["wall_s"].get<double>());
  EXPECT_EQ(merged["wall_s"].get<double>(), longest);
}

TEST_F(ShardedBatch, ASummaryRoundTripsThroughTheMerge) {
  (void)run(config(), std::nullopt, 1);
  const std::string text = read_text(out(1) / "batch_summary.json");
  json merged = json::parse(merge_batch_summaries({text}, out(1).string()));
  const json want = json::parse(text);
  EXPECT_EQ(merged["files"], want["files"]);
  EXPECT_EQ(merged["devices"], want["devices"]);
  EXPECT_EQ(merged["shards"], 1);
  merged.erase("shards");
  EXPECT_EQ(merged, want);
  EXPECT_EQ(batch_summary_csv_from_json(text), read_text(out(1) / "batch_summary.csv"));
}

TEST_F(ShardedBatch, MergeRefusesSummariesThatDoNotBelongTogether) {
  const std::string a = read_text(run(config(), BatchShard{0, 2}, 1).summary_json);
  const std::string b = read_text(run(config(), BatchShard{1, 2}, 1).summary_json);
  const std::string n3 = read_text(run(config(), BatchShard{1, 3}, 2).summary_json);
  // The same list (out_dir included), another gain.
  const std::string louder = read_text(run(config(-3), BatchShard{1, 2}, 1).summary_json);
  EXPECT_NO_THROW((void)merge_batch_summaries({a, b}, "o"));

  std::string m = config_message([&] {
    (void)merge_batch_summaries({a, n3}, "o", {"A.json", "B.json"});
  });
  EXPECT_NE(m.find("disagree on N"), std::string::npos) << m;
  EXPECT_NE(m.find("2 in A.json; 3 in B.json"), std::string::npos) << m;
  m = config_message([&] { (void)merge_batch_summaries({a, louder}, "o", {"A.json", "B.json"}); });
  EXPECT_NE(m.find("different configs"), std::string::npos) << m;
  EXPECT_NE(m.find("B.json"), std::string::npos) << m;
  // Another input list: a file more (shard 1's run over a changed folder).
  test::write_audio((dir_.path() / "in" / "f8.wav").string(), SF_FORMAT_WAV | SF_FORMAT_PCM_16,
                    16000, 1, test::random_samples(500, 99, 0.5f, 16));
  const std::string more = read_text(run(config(), BatchShard{1, 2}, 1).summary_json);
  m = config_message([&] { (void)merge_batch_summaries({a, more}, "o", {"A.json", "B.json"}); });
  EXPECT_NE(m.find("different input lists"), std::string::npos) << m;
  EXPECT_NE(m.find("--inputs-from"), std::string::npos) << m;
  m = config_message([&] { (void)merge_batch_summaries({a, a}, "o"); });
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m;
  m = config_message([&] { (void)missing_shards({a, n3}); });
  EXPECT_NE(m.find("disagree on N"), std::string::npos) << m;
  EXPECT_NE(config_message([&] {
              (void)merge_batch_summaries({"{]", a}, "o");
            }).find("not a batch summary"),
            std::string::npos);
}

TEST_F(ShardedBatch, TaskSummariesWithoutShardsMerge) {
  // Per-task summaries as a Dask driver would get them: explicit items, no files written.
  const Config c = config();
  const std::vector<BatchItem> all = collect_batch_items(c, {}, out(1).string());
  ASSERT_EQ(all.size(), 8U);
  std::vector<std::string> texts;
  for (std::size_t k = 0; k < all.size(); k += 3) {
    BatchOptions o;
    o.quiet = true;
    o.out_dir = out(1).string();
    o.items.assign(all.begin() + static_cast<std::ptrdiff_t>(k),
                   all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), k + 3)));
    o.write_summary = false;
    const BatchSummary s = run_batch(c, o);
    EXPECT_FALSE(s.summary_written);
    EXPECT_EQ(s.exit_code(), s.failed > 0 ? 1 : 0);
    texts.push_back(batch_summary_json(s, batch_config_fingerprint(c, s.backend)));
  }
  std::reverse(texts.begin(), texts.end());
  EXPECT_FALSE(fs::exists(out(1) / "batch_summary.json"));
  EXPECT_TRUE(missing_shards(texts).empty());
  const json merged = json::parse(merge_batch_summaries(texts, out(1).string()));
  EXPECT_EQ(merged["shards"], 3);
  EXPECT_EQ(merged["counts"]["total"], 8);
  EXPECT_EQ(merged["counts"]["ok"], 7);
  EXPECT_EQ(merged["counts"]["failed"], 1);
  for (std::size_t k = 0; k < all.size(); ++k)
    EXPECT_EQ(merged["files"][k]["file"], all[k].input);

  // Another config's task: refused.
  const Config other = config(-3);
  BatchOptions o;
  o.quiet = true;
  o.out_dir = out(2).string();
  o.items = {all.front()};
  o.write_summary = false;
  const std::string odd =
      batch_summary_json(run_batch(other, o), batch_config_fingerprint(other, "cpu"));
  const std::string m = config_message([&] { (void)merge_batch_summaries({texts[0], odd}, "o"); });
  EXPECT_NE(m.find("config_fingerprint"), std::string::npos) << m;
  // A shard summary and a task summary do not mix.
  const std::string shard = read_text(run(c, BatchShard{0, 2}, 3).summary_json);
  EXPECT_NE(config_message([&] {
              (void)merge_batch_summaries({texts[0], shard}, "o");
            }).find("is not"),
            std::string::npos);
}

TEST_F(ShardedBatch, AnEmptyShardWritesAnEmptySummary) {
  // 8 files over 9 shards: shard 8 has none.
  const BatchSummary s = run(config(), BatchShard{8, 9}, 1);
  EXPECT_EQ(s.files.size(), 0U);
  EXPECT_EQ(s.exit_code(), 0);
  const json j = json::parse(read_text(out(1) / "batch_summary.8-of-9.json"));
  EXPECT_EQ(j["counts"]["total"], 0);
  EXPECT_EQ(j["shard"]["inputs_total"], 8);
}

TEST_F(ShardedBatch, MergeDirWritesOnlyWhenComplete) {
  (void)run(config(), BatchShard{0, 3}, 1);
  (void)run(config(), BatchShard{2, 3}, 1);
  BatchMergeResult r = merge_batch_dir(out(1).string());
  EXPECT_EQ(r.shard_count, 3);
  EXPECT_EQ(r.missing, std::vector<int>{1});
  EXPECT_FALSE(fs::exists(out(1) / "batch_summary.json"));
  (void)run(config(), BatchShard{1, 3}, 1);
  r = merge_batch_dir(out(1).string());
  EXPECT_TRUE(r.missing.empty());
  EXPECT_EQ(r.exit_code, 1); // the bad file
  EXPECT_EQ(r.files, 8U);
  const json j = json::parse(read_text(out(1) / "batch_summary.json"));
  EXPECT_EQ(j["shards"], 3);
  EXPECT_EQ(read_text(out(1) / "batch_summary.csv"),
            batch_summary_csv_from_json(read_text(out(1) / "batch_summary.json")));
  // A renamed summary is refused.
  fs::rename(out(1) / "batch_summary.1-of-3.json", out(1) / "batch_summary.1-of-4.json");
  EXPECT_NE(config_message([&] { (void)merge_batch_dir(out(1).string()); }).find("its name says"),
            std::string::npos);
  EXPECT_NE(config_message([&] { (void)merge_batch_dir(out(5).string()); }).find("not a folder"),
            std::string::npos);
}

} // namespace
} // namespace sigstream
