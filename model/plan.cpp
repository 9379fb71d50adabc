#include "model/plan.hpp"

#include "core/int_math.hpp"

namespace sigstream {

FrameWindow PlannedStage::input_window(FrameWindow out) const noexcept {
  if (up == 1 && down == 1)
    return {out.lo - lookback, out.hi + lookahead};
  return {ceil_div(out.lo * down - lookback, up),
          floor_div((out.hi - 1) * down + lookahead, up) + 1};
}

std::int64_t PlannedStage::length_out(std::int64_t in) const noexcept {
  // An open end stays open (and no product may overflow).
  if ((up == 1 && down == 1) || in >= kOpenEnd)
    return in + extra;
  return ceil_div(in * up, down) + extra;
}

std::int64_t PlannedStage::owned_from(std::int64_t f) const noexcept {
  return up == 1 && down == 1 ? f : ceil_div(f * down, up);
}

std::int64_t Plan::defined_in(std::size_t j, std::int64_t frames) const noexcept {
  if (!rate_changes)
    return j < stages.size() ? stages[j].defined_in(frames) : frames + output_grow;
  for (std::size_t i = 0; i < j && i < stages.size(); ++i)
    frames = stages[i].length_out(frames);
  return frames;
}

bool Plan::paired(std::size_t j) const noexcept {
  for (std::size_t i = 0; i < j && i < stages.size(); ++i)
    if (!stages[i].keeps_pairing())
      return false;
  return true;
}

std::vector<int> Plan::metric_channels() const {
  std::vector<int> out;
  for (const PlannedStage& st : stages)
    if (st.metrics_slot >= 0)
      out.push_back(st.channels_in);
  out.push_back(output_channels);
  return out;
}

void Plan::windows(std::int64_t start, std::int64_t frames, std::vector<FrameWindow>& w) const {
  w.resize(stages.size() + 1);
  w[stages.size()] = {start, start + frames};
  for (std::size_t j = stages.size(); j-- > 0;)
    w[j] = stages[j].input_window(w[j + 1]);
}

std::vector<FrameWindow> Plan::windows(std::int64_t start, std::int64_t frames) const {
  std::vector<FrameWindow> w;
  windows(start, frames, w);
  return w;
}

FrameWindow Plan::source_window(std::int64_t start, std::int64_t frames) const noexcept {
  FrameWindow w{start, start + frames};
  for (std::size_t j = stages.size(); j-- > 0;)
    w = stages[j].input_window(w);
  return w;
}

FrameWindow Plan::owned(std::size_t j, std::int64_t start, std::int64_t frames) const noexcept {
  FrameWindow o{start, start + frames};
  for (std::size_t i = stages.size(); i-- > j;)
    o = {stages[i].owned_from(o.lo), stages[i].owned_from(o.hi)};
  return o;
}

} // namespace sigstream
