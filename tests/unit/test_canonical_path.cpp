// CanonicalPaths (pipeline/canonical_path.hpp): each folder resolved once,
// the same answers as canonical_of over files, missing files and folders,
// links to files and to folders, dots, doubled separators and relative
// spellings, asked in a shuffled order and again.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "pipeline/canonical_path.hpp"

namespace fs = std::filesystem;
using sigstream::canonical_of;
using sigstream::CanonicalPaths;

namespace {

struct TempTree {
  fs::path root;
  TempTree() {
    root = fs::temp_directory_path() / ("sigstream-canon-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "in" / "deep");
    fs::create_directories(root / "other");
    for (const char* f : {"in/a.wav", "in/deep/b.wav", "other/c.wav"})
      std::ofstream(root / f) << "x";
    fs::create_directory_symlink(root / "other", root / "in" / "to_other");
    fs::create_symlink(root / "other" / "c.wav", root / "in" / "link.wav");
    fs::create_symlink(root / "nowhere.wav", root / "in" / "dangling.wav");
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

} // namespace

TEST(CanonicalPaths, GivesCanonicalOfsAnswerForEveryKindOfPath) {
  const TempTree t;
  const fs::path r = t.root;
  std::vector<fs::path> paths = {
      r / "in" / "a.wav",
      r / "in" / "deep" / "b.wav",
      r / "in" / "missing.wav",
      r / "in" / "nodir" / "x.json",
      r / "in" / "to_other" / "c.wav",
      r / "in" / "to_other" / "new.csv",
      r / "in" / "link.wav",
      r / "in" / "dangling.wav",
      r / "in" / "." / "a.wav",
      r / "in" / "deep" / ".." / "a.wav",
      r / "in" / "nodir" / ".." / "a.wav",
      fs::path(r.string() + "//in///a.wav"),
      r / "in" / "deep" / "",
      r / "in" / "deep" / ".",
      r / "in" / "deep" / "..",
      r / "in",
      fs::path("/"),
  };
  // The same files by relative spellings, from this process's folder.
  const fs::path here = fs::current_path();
  for (const char* f : {"in/a.wav", "in/to_other/c.wav", "in/nodir/y.wav"})
    paths.push_back((r / f).lexically_relative(here));
  paths.emplace_back("not_here_either.wav");
  std::vector<fs::path> asked = paths;
  asked.insert(asked.end(), paths.begin(), paths.end());
  std::mt19937 rng(13);
  std::shuffle(asked.begin(), asked.end(), rng);
  CanonicalPaths canon;
  for (const fs::path& p : asked)
    EXPECT_EQ(canon.of(p), canonical_of(p)) << p;
  // The paths in plain folders took the cache's way: each folder resolved once.
  EXPECT_LE(canon.folders_resolved(), 12u);
  // Links resolve, and two spellings of one file are one path.
  EXPECT_EQ(canon.of(r / "in" / "link.wav"), canon.of(r / "other" / "c.wav"));
  EXPECT_EQ(canon.of(r / "in" / "to_other" / "c.wav"), canonical_of(r / "other" / "c.wav"));
  EXPECT_EQ(canon.of(r / "in" / "deep" / ".." / "a.wav"), canon.of(r / "in" / "a.wav"));
}

// The common case, a batch's outputs: many names, existing or not yet, in one
// folder (and a folder not made yet), relative to this process's folder.
TEST(CanonicalPaths, ResolvesAFolderOnceForItsNamesExistingOrNot) {
  const TempTree t;
  const fs::path before = fs::current_path();
  fs::current_path(t.root); // relative spellings without dots
  struct Back {
    fs::path to;
    ~Back() { fs::current_path(to); }
  } const back{before};
  CanonicalPaths canon;
  for (int i = 0; i < 200; ++i) {
    const std::string n = "out" + std::to_string(i * 37 % 1000);
    for (const fs::path& p : {fs::path("in") / (n + ".wav"), fs::path("in/deep") / (n + ".json"),
                              fs::path("made_later") / (n + ".csv")})
      ASSERT_EQ(canon.of(p), canonical_of(p)) << p;
  }
  EXPECT_EQ(canon.of("in/a.wav"), canonical_of(t.root) / "in" / "a.wav");
  EXPECT_EQ(canon.folders_resolved(), 3u); // in, in/deep, made_later: once each
}
