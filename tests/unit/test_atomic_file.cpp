// AtomicFile: a file appears at its path only complete, replacing what was
// there, and leaves nothing else behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
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

}  // namespace
}  // namespace sigstream
