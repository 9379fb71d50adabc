#pragma once
// Which kind a stage is (`type: fir`), by the name YAML spells: the key of
// the registry (stages/registry.cpp). Below stages/ so that the config, plan
// and report types (model/) can carry it; each kind defines its own value in
// its folder (stages/<kind>/spec.hpp: `inline constexpr StageType kFirType{"fir"}`),
// so adding a kind changes nothing here. A default StageType names no kind.
#include <string_view>

namespace sigstream {

class StageType {
public:
  constexpr StageType() noexcept = default;
  // `name` must outlive every copy (a string literal, or a registry row's).
  constexpr explicit StageType(std::string_view name) noexcept : name_(name) {}
  [[nodiscard]] constexpr std::string_view name() const noexcept { return name_; }
  [[nodiscard]] constexpr bool empty() const noexcept { return name_.empty(); }
  friend constexpr bool operator==(StageType a, StageType b) noexcept { return a.name_ == b.name_; }

private:
  std::string_view name_;
};

// As YAML spells it (SPEC §2), so to_string output can be pasted into a config.
[[nodiscard]] constexpr std::string_view to_string(StageType t) noexcept {
  return t.empty() ? std::string_view("unknown") : t.name();
}

} // namespace sigstream
