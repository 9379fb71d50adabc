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

// What a lookup saw of the path itself: a file's size and type, a folder; not
// a link (its target's answer is stat's), nor a missing name. The names in a
// folder that was missing when first asked (an out_dir not made yet) take the
// folder's canonical spelling, as canonical_of gives it, with no lookup of
// their own; asking again gives the same string (one cached).
TEST(CanonicalPaths, SaysWhatItFoundOfAFileAndKeepsItsAnswers) {
  const TempTree t;
  const fs::path r = t.root;
  std::ofstream(r / "in" / "sized.wav") << std::string(1237, 'x');
  CanonicalPaths canon;
  const auto file = canon.found((r / "in" / "sized.wav").string());
  ASSERT_TRUE(file.has_value());
  EXPECT_TRUE(file->regular);
  EXPECT_FALSE(file->directory);
  EXPECT_EQ(file->bytes, 1237U);
  const auto folder = canon.found((r / "in" / "deep").string());
  ASSERT_TRUE(folder.has_value());
  EXPECT_TRUE(folder->directory);
  EXPECT_FALSE(canon.found((r / "in" / "link.wav").string()).has_value());
  EXPECT_FALSE(canon.found((r / "in" / "to_other").string()).has_value());
  EXPECT_FALSE(canon.found((r / "in" / "missing.wav").string()).has_value());
  EXPECT_FALSE(canon.found((r / "in" / "." / "a.wav").string()).has_value());

  const fs::path later = r / "out" / "made_later";
  for (const char* n : {"a.wav", "a.json", "b.wav"}) {
    const std::string& k = canon.key((later / n).string());
    EXPECT_EQ(k, canonical_of(later / n).native());
    EXPECT_EQ(&canon.key((later / n).string()), &k) << "asked again: not the cached answer";
  }
  EXPECT_EQ(canon.key(r.string() + "/in/a.wav"), canonical_of(r / "in" / "a.wav").native());
  EXPECT_EQ(canon.key("/"), "/");
}
