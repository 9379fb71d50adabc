// AtomicFile: a file appears at its path only complete, replacing what was
// there, and leaves nothing else behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "pipeline/io/atomic_file.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t entries(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir))
    ++n;
  return n;
}

TEST(AtomicFile, NewFileAppearsOnlyAtCommit) {
  test::TempDir dir;
  const std::string path = dir.file("out.txt");
  AtomicFile f(path);
  write_all(f, "hello");
  EXPECT_FALSE(std::filesystem::exists(path));
  f.commit();
  EXPECT_EQ(slurp(path), "hello");
  EXPECT_EQ(entries(dir.path()), 1u) << "no temporary left";
}

TEST(AtomicFile, ReplacesAnExistingFileAndDeletesTheOldOne) {
  test::TempDir dir;
  const std::string path = dir.file("out.txt");
  { std::ofstream(path) << "old contents, longer than the new"; }
  // A hard link to the old file keeps it reachable: it must keep the old bytes.
  const std::string link = dir.file("old-link.txt");
  std::filesystem::create_hard_link(path, link);
  AtomicFile f(path);
  write_all(f, "new");
  EXPECT_EQ(slurp(path), "old contents, longer than the new") << "untouched until commit";
  f.commit();
  EXPECT_EQ(slurp(path), "new");
  EXPECT_EQ(slurp(link), "old contents, longer than the new");
  EXPECT_EQ(std::filesystem::hard_link_count(link), 1u) << "the old file's other name is gone";
  EXPECT_EQ(entries(dir.path()), 2u) << "out.txt and old-link.txt only";
}

TEST(AtomicFile, AFolderThatAppearedAtThePathIsNotSwappedAway) {
  test::TempDir dir;
  const std::string path = dir.file("out.wav");
  AtomicFile f(path);
  write_all(f, "audio");
  std::filesystem::create_directories(dir.path() / "out.wav" / "inner");
  { std::ofstream((dir.path() / "out.wav" / "inner" / "keep.txt").string()) << "mine"; }
  EXPECT_THROW(f.commit(), Error);
  EXPECT_EQ(slurp((dir.path() / "out.wav" / "inner" / "keep.txt").string()), "mine");
}

TEST(AtomicFile, ALinkAtThePathIsReplacedAndItsTargetKept) {
  test::TempDir dir;
  const std::string target = dir.file("elsewhere.txt"), path = dir.file("out.txt");
  { std::ofstream(target) << "not mine to change"; }
  std::filesystem::create_symlink(target, path);
  AtomicFile f(path);
  write_all(f, "new");
  f.commit();
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_EQ(slurp(path), "new");
  EXPECT_EQ(slurp(target), "not mine to change");
  EXPECT_EQ(entries(dir.path()), 2u);
}

TEST(AtomicFile, NotCommittedLeavesTheTargetAsItWas) {
  test::TempDir dir;
  const std::string path = dir.file("out.txt");
  { std::ofstream(path) << "keep me"; }
  {
    AtomicFile f(path);
    write_all(f, "half a file");
  }
  EXPECT_EQ(slurp(path), "keep me");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFile, ReplacesAFileWhoseNameIsAsLongAsTheFileSystemAllows) {
  // Replacing links the finished file under a hidden name first: that name,
  // with its host and pid, must still fit NAME_MAX (255 bytes).
  test::TempDir dir;
  const std::string path = dir.file(std::string(251, 'n') + ".wav");
  { std::ofstream(path) << "old"; }
  AtomicFile f(path);
  write_all(f, "new");
  f.commit();
  EXPECT_EQ(slurp(path), "new");
  EXPECT_EQ(entries(dir.path()), 1u);
}

// --- Temporary names: who writes them ---------------------------------------

TEST(TempNames, CarryTheTargetTheHostAndThePid) {
  EXPECT_EQ(temp_file_name("out.wav", "node-17", 4242, "Ab12Cd"),
            ".out.wav.sigstream-node-17-4242-Ab12Cd");
  EXPECT_EQ(temp_file_name("out.wav", "gpu1", 7), ".out.wav.sigstream-gpu1-7-XXXXXX")
      << "mkstemp's pattern";
  const auto p = parse_temp_file_name(".out.wav.sigstream-node-17-4242-Ab12Cd");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->stem, "out.wav");
  EXPECT_EQ(p->host, "node-17") << "read from the right: the host may hold '-' and digits";
  EXPECT_EQ(p->pid, 4242);
  EXPECT_FALSE(p->old_format());
  // A name that holds the tag itself.
  const auto q = parse_temp_file_name(temp_file_name("a.sigstream-b.wav", "h-1-2", 99, "zzzzzz"));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->stem, "a.sigstream-b.wav");
  EXPECT_EQ(q->host, "h-1-2");
  EXPECT_EQ(q->pid, 99);
}

TEST(TempNames, TheOldFormatIsRecognised) {
  const auto p = parse_temp_file_name(".out.wav.sigstream-Ab12Cd");
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->old_format());
  EXPECT_EQ(p->stem, "out.wav");
  EXPECT_EQ(p->host, "");
}

TEST(TempNames, OtherNamesAreNotTemporaries) {
  for (const char* n : {"out.wav", ".out.wav", ".out.wav.sigstream-", ".sigstream-h-1-Ab12Cd",
                        ".out.wav.sigstream-Ab12C", ".out.wav.sigstream-Ab12C!",
                        ".out.wav.sigstream-h-1-Ab12C", ".out.wav.sigstream-h-01-Ab12Cd",
                        ".out.wav.sigstream-h-0-Ab12Cd", ".out.wav.sigstream-h-99999999999-Ab12Cd",
                        ".out.wav.sigstream-h_x-1-Ab12Cd", ".out.wav.sigstream--1-Ab12Cd",
                        ".out.wav.sigstream-h--Ab12Cd", "out.wav.sigstream-h-1-Ab12Cd"})
    EXPECT_FALSE(parse_temp_file_name(n).has_value()) << n;
}

TEST(TempNames, ALongTargetNameIsCutToFitNameMax) {
  const std::string name = std::string(250, 'a');
  const std::string t = temp_file_name(name, std::string(32, 'h'), 2147483647, "Ab12Cd");
  EXPECT_LE(t.size(), 255u);
  const auto p = parse_temp_file_name(t);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->stem, name.substr(0, kTempStemMax));
  // Not inside a UTF-8 character: "é" is two bytes, straddling the cut.
  const std::string utf8 = std::string(kTempStemMax - 1, 'a') + "\xc3\xa9" + "tail";
  EXPECT_EQ(parse_temp_file_name(temp_file_name(utf8, "h", 1, "Ab12Cd"))->stem,
            std::string(kTempStemMax - 1, 'a'));
}

TEST(TempNames, HostTagsAreSafeShortAndKeepNamesApart) {
  EXPECT_EQ(sanitize_host_tag("gpu017"), "gpu017");
  EXPECT_EQ(sanitize_host_tag("node-17"), "node-17");
  EXPECT_EQ(sanitize_host_tag(""), "host");
  const std::string fqdn = sanitize_host_tag("node17.cluster.local");
  EXPECT_EQ(fqdn.rfind("node17-cluster-local-", 0), 0u) << fqdn;
  EXPECT_EQ(fqdn.size(), std::string("node17-cluster-local-").size() + 8) << fqdn;
  EXPECT_NE(fqdn, sanitize_host_tag("node17-cluster-local"));
  EXPECT_NE(sanitize_host_tag("a.b"), sanitize_host_tag("a_b"));
  const std::string longer(40, 'x'), other = std::string(39, 'x') + "y";
  EXPECT_LE(sanitize_host_tag(longer).size(), 32u);
  EXPECT_NE(sanitize_host_tag(longer), sanitize_host_tag(other)) << "cut names stay apart";
  const std::string odd = sanitize_host_tag("h\xc3\xa9 st/1");
  for (const std::string& h : {fqdn, sanitize_host_tag(longer), odd, temp_host_tag()}) {
    EXPECT_FALSE(h.empty());
    for (char c : h)
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-') << h;
  }
  char buf[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(::gethostname(buf, sizeof buf - 1), 0);
  EXPECT_EQ(temp_host_tag(), sanitize_host_tag(buf));
}

// --- Which temporaries a process removes --------------------------------------

class StaleTemps : public ::testing::Test {
protected:
  // A temporary beside `target` (in dir_) named for `host` and `pid`, last
  // written `age` ago.
  std::string make(const std::string& target, const std::string& host, long pid,
                   std::chrono::seconds age = std::chrono::seconds(0),
                   const std::string& suffix = "Ab12Cd") {
    const std::string name = pid == 0 ? "." + target + ".sigstream-" + suffix
                                      : temp_file_name(target, host, pid, suffix);
    const std::filesystem::path p = dir_.path() / name;
    std::ofstream(p) << "partial";
    std::filesystem::last_write_time(p, std::filesystem::file_time_type::clock::now() - age);
    return name;
  }
  [[nodiscard]] bool there(const std::string& name) const {
    return std::filesystem::exists(dir_.path() / name);
  }
  [[nodiscard]] std::string target(const std::string& name) const { return dir_.file(name); }

  test::TempDir dir_;
};

TEST_F(StaleTemps, ADeadLocalWritersFileGoesALiveOnesStays) {
  test::LiveChild alive;
  const long dead = test::dead_pid();
  const std::string of_dead = make("out.wav", temp_host_tag(), dead);
  const std::chrono::seconds now(0);
  const std::string of_live = make("out.wav", temp_host_tag(), alive.pid(), now, "Zz9999");
  const std::string of_mine = make("out.wav", temp_host_tag(), ::getpid(), now, "Mm0000");
  const TempSweep s = remove_stale_temps({target("out.wav")});
  EXPECT_FALSE(there(of_dead));
  EXPECT_TRUE(there(of_live)) << "its writer runs";
  EXPECT_TRUE(there(of_mine)) << "this process is its writer";
  EXPECT_EQ(s.removed, 1);
  EXPECT_EQ(s.live, 2);
  EXPECT_EQ(s.other_hosts, 0);
}

TEST_F(StaleTemps, AWriterThatExitedButIsNotReapedYetIsDead) {
  char arg0[] = "true";
  char* argv[] = {arg0, nullptr};
  pid_t zombie = -1;
  ASSERT_EQ(posix_spawnp(&zombie, "true", nullptr, nullptr, argv, environ), 0);
  // Until waitpid, the pid exists (kill(pid, 0) succeeds) in state Z.
  const std::string stat = "/proc/" + std::to_string(zombie) + "/stat";
  std::string line;
  for (int i = 0; i < 2000; ++i) {
    std::ifstream f(stat);
    std::getline(f, line);
    if (line.find(") Z ") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_NE(line.find(") Z "), std::string::npos) << line;
  const std::string name = make("out.wav", temp_host_tag(), zombie);
  const TempSweep s = remove_stale_temps({target("out.wav")});
  ::waitpid(zombie, nullptr, 0);
  EXPECT_FALSE(there(name));
  EXPECT_EQ(s.removed, 1);
}

TEST_F(StaleTemps, AnotherHostsFileIsNeverRemoved) {
  // Even with a pid that is dead here, and a day old: only its host can tell.
  const std::string other = temp_host_tag() == "other-host" ? "another-host" : "other-host";
  const std::string name = make("out.wav", other, test::dead_pid(), std::chrono::hours(48));
  const TempSweep s = remove_stale_temps({target("out.wav")});
  EXPECT_TRUE(there(name));
  EXPECT_EQ(s.other_hosts, 1);
  EXPECT_EQ(s.removed, 0);
}

TEST_F(StaleTemps, APidThatStartedAfterTheLastWriteIsNotTheWriter) {
  // The pid lives, but its process started after the file was last written
  // (beyond the slack): the pid was reused, the writer is dead.
  test::LiveChild reused;
  const std::string stale =
      make("out.wav", temp_host_tag(), reused.pid(), kPidReuseSlack + std::chrono::hours(1));
  const std::string recent = make("out.wav", temp_host_tag(), reused.pid(),
                                  kPidReuseSlack - std::chrono::seconds(30), "Rr1111");
  const TempSweep s = remove_stale_temps({target("out.wav")});
  EXPECT_FALSE(there(stale));
  EXPECT_TRUE(there(recent)) << "within the slack: kept (in doubt, a file is kept)";
  EXPECT_EQ(s.removed, 1);
  EXPECT_EQ(s.live, 1);
}

TEST_F(StaleTemps, OldFormatFilesGoOnlyOnceTheyAreADayOld) {
  const std::string fresh = make("out.wav", "", 0, kOldTempAge - std::chrono::hours(1), "Ab12Cd");
  const std::string old = make("out.wav", "", 0, kOldTempAge + std::chrono::hours(1), "Qq7777");
  const TempSweep s = remove_stale_temps({target("out.wav")});
  EXPECT_TRUE(there(fresh));
  EXPECT_FALSE(there(old));
  EXPECT_EQ(s.removed, 1);
  EXPECT_EQ(s.live, 1);
}

TEST_F(StaleTemps, OnlyTheTargetsTemporariesAreConsidered) {
  const long dead = test::dead_pid();
  const std::string of_other_target = make("other.wav", temp_host_tag(), dead);
  const std::string not_a_temp = ".out.wav.sigstream-notes.txt";
  std::ofstream((dir_.path() / not_a_temp).string()) << "mine";
  const std::string folder = temp_file_name("out.wav", temp_host_tag(), dead, "Dd0000");
  std::filesystem::create_directory(dir_.path() / folder);
  const std::string long_name = std::string(240, 'l') + ".wav";
  const std::string of_long = make(long_name, temp_host_tag(), dead);
  const TempSweep s = remove_stale_temps({target("out.wav"), target(long_name)});
  EXPECT_TRUE(there(of_other_target));
  EXPECT_TRUE(there(not_a_temp));
  EXPECT_TRUE(there(folder)) << "only regular files are sigstream's temporaries";
  EXPECT_FALSE(there(of_long)) << "a cut name still matches its target";
  EXPECT_EQ(s.removed, 1);
}

TEST(SweptTargets, HeldWhileABatchRunsCountedForEachHolder) {
  const std::string a = "/some/out/a.wav", b = "/some/out/b.json";
  EXPECT_FALSE(swept_by_a_running_batch(a));
  {
    const SweptTargets first({a, b, ""});
    EXPECT_TRUE(swept_by_a_running_batch(a));
    EXPECT_TRUE(swept_by_a_running_batch(b));
    EXPECT_FALSE(swept_by_a_running_batch("")) << "no target: never swept";
    EXPECT_FALSE(swept_by_a_running_batch("/some/out/c.wav"));
    EXPECT_FALSE(swept_by_a_running_batch("/some/out/./a.wav")) << "the same string only";
    {
      const SweptTargets second({a}); // another batch of this process on the same target
      EXPECT_TRUE(swept_by_a_running_batch(a));
    }
    EXPECT_TRUE(swept_by_a_running_batch(a)) << "the first batch still runs";
  }
  EXPECT_FALSE(swept_by_a_running_batch(a));
  EXPECT_FALSE(swept_by_a_running_batch(b));
}

} // namespace
} // namespace sigstream
