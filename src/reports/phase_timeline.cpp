// Summaries of phase stamps: see phase_timeline.h.
#include "reports/phase_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "common/stats.h"

namespace mha {
namespace {

// An empty list gives 0, as median() does: a step without working blocks has no phases to show.
double max_or_zero(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

}  // namespace

PhaseSummary summarise_phases(const std::vector<DecodeBlockStamps>& decode,
                              const std::vector<ReduceBlockStamps>& reduce,
                              double nominal_ns_per_cycle) {
  std::vector<const DecodeBlockStamps*> stamped;
  for (const auto& b : decode)
    if (b.start_ns != 0 && b.exit_ns >= b.start_ns) stamped.push_back(&b);
  if (stamped.empty())
    throw std::invalid_argument("phase stamps: no decode block recorded a start and an exit");
  PhaseSummary s;
  s.decode_blocks = static_cast<int>(stamped.size());
  uint64_t t0 = stamped.front()->start_ns;
  for (const auto* b : stamped) t0 = std::min(t0, b->start_ns);
  auto since = [t0](uint64_t ns) {
    return (static_cast<double>(ns) - static_cast<double>(t0)) * 1e-3;
  };

  // The cycle counter against the timer, over blocks that lived at least 1 µs (the timer may
  // tick in coarse steps; the counter runs at the SM clock, which boosts under load).
  std::vector<double> ratios;
  for (const auto* b : stamped)
    if (b->exit_ns - b->start_ns >= 1000 && b->exit_cycle > b->start_cycle)
      ratios.push_back(static_cast<double>(b->exit_ns - b->start_ns) /
                       static_cast<double>(b->exit_cycle - b->start_cycle));
  s.ns_per_cycle = ratios.empty() ? nominal_ns_per_cycle : median(ratios);
  auto cycles_us = [&](uint64_t from, uint64_t to) {
    return to > from ? (to - from) * s.ns_per_cycle * 1e-3 : 0.0;
  };

  std::vector<double> ramp, loop, tail, merge, cluster_wait, finish, last_barrier;
  std::map<int, int> per_sm;
  std::vector<uint64_t> timer;
  for (const auto* b : stamped) {
    s.start_spread_us = std::max(s.start_spread_us, since(b->start_ns));
    s.decode_end_us = std::max(s.decode_end_us, since(b->exit_ns));
    timer.push_back(b->start_ns);
    timer.push_back(b->exit_ns);
    if (b->first_tile_cycle == 0) continue;  // no tile: it returned at once
    ++s.working_blocks;
    s.max_blocks_per_sm = std::max(s.max_blocks_per_sm, ++per_sm[b->sm]);
    ramp.push_back(cycles_us(b->start_cycle, b->first_tile_cycle));
    loop.push_back(cycles_us(b->first_tile_cycle, b->loop_end_cycle));
    tail.push_back(cycles_us(b->loop_end_cycle, b->exit_cycle));
    merge.push_back(cycles_us(b->loop_end_cycle, b->merged_cycle));
    const uint64_t met = b->cluster_met_cycle != 0 ? b->cluster_met_cycle : b->merged_cycle;
    cluster_wait.push_back(cycles_us(b->merged_cycle, met));
    finish.push_back(cycles_us(met, b->exit_cycle));
    if (b->combined_cycle != 0) last_barrier.push_back(cycles_us(b->combined_cycle, b->exit_cycle));
  }
  s.ramp_us = median(ramp), s.ramp_max_us = max_or_zero(ramp);
  s.loop_us = median(loop), s.loop_max_us = max_or_zero(loop);
  s.tail_us = median(tail), s.tail_max_us = max_or_zero(tail);
  s.merge_us = median(merge), s.cluster_wait_us = median(cluster_wait),
  s.finish_us = median(finish);
  s.last_barrier_us = last_barrier.empty() ? 0.0 : median(last_barrier);

  bool first_reduce = true;
  for (const auto& r : reduce) {
    if (r.start_ns == 0 || r.waited_ns == 0) continue;  // not launched, or nothing to combine
    ++s.reduce_blocks;
    s.reduce_start_us =
        first_reduce ? since(r.start_ns) : std::min(s.reduce_start_us, since(r.start_ns));
    first_reduce = false;
    s.reduce_waited_us = std::max(s.reduce_waited_us, since(r.waited_ns));
    s.reduce_end_us = std::max(s.reduce_end_us, since(r.exit_ns));
    timer.push_back(r.start_ns);
    timer.push_back(r.exit_ns);
  }
  s.step_us = std::max(s.decode_end_us, s.reduce_end_us);

  std::sort(timer.begin(), timer.end());
  for (size_t i = 1; i < timer.size(); ++i) {
    const double gap = static_cast<double>(timer[i] - timer[i - 1]);
    if (gap > 0 && (s.timer_step_ns == 0 || gap < s.timer_step_ns)) s.timer_step_ns = gap;
  }
  return s;
}

PhaseSummary median_phases(const std::vector<PhaseSummary>& steps) {
  if (steps.empty()) throw std::invalid_argument("median_phases: no step");
  PhaseSummary m = steps.front();
  auto field = [&](double PhaseSummary::*f) {
    std::vector<double> v;
    for (const auto& s : steps) v.push_back(s.*f);
    m.*f = median(v);
  };
  for (auto f :
       {&PhaseSummary::ns_per_cycle, &PhaseSummary::start_spread_us, &PhaseSummary::ramp_us,
        &PhaseSummary::ramp_max_us, &PhaseSummary::loop_us, &PhaseSummary::loop_max_us,
        &PhaseSummary::tail_us, &PhaseSummary::tail_max_us, &PhaseSummary::merge_us,
        &PhaseSummary::cluster_wait_us, &PhaseSummary::finish_us, &PhaseSummary::last_barrier_us,
        &PhaseSummary::decode_end_us, &PhaseSummary::reduce_start_us,
        &PhaseSummary::reduce_waited_us, &PhaseSummary::reduce_end_us, &PhaseSummary::step_us,
        &PhaseSummary::timer_step_ns})
    field(f);
  return m;
}

std::string phase_table_header() {
  return "| kernel | problem | P | working blocks (max an SM) | last start | ramp (max) | loop "
         "(max) | tail (max) | "
         "tail: merge / cluster wait / finish (of it, last barrier) | decode end | reduce start | "
         "reduce waited | reduce end | "
         "step | timed step | timer step ns |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
}

std::string phase_table_row(const std::string& kernel, const std::string& problem,
                            const std::string& split, const PhaseSummary& s, double timed_us) {
  const bool reduced = s.reduce_blocks > 0;
  auto us = [](double v) { return fmt::format("{:.2f}", v); };
  const std::string finish = s.last_barrier_us > 0
                                 ? fmt::format("{} ({})", us(s.finish_us), us(s.last_barrier_us))
                                 : us(s.finish_us);
  return fmt::format(
      "| {} | {} | {} | {} ({}) | {} | {} ({}) | {} ({}) | {} ({}) | {} / {} / {} | {} | {} | {} | "
      "{} | {} | {} | {:.0f} |\n",
      kernel, problem, split, s.working_blocks, s.max_blocks_per_sm, us(s.start_spread_us),
      us(s.ramp_us), us(s.ramp_max_us), us(s.loop_us), us(s.loop_max_us), us(s.tail_us),
      us(s.tail_max_us), us(s.merge_us), us(s.cluster_wait_us), finish, us(s.decode_end_us),
      reduced ? us(s.reduce_start_us) : "-", reduced ? us(s.reduce_waited_us) : "-",
      reduced ? us(s.reduce_end_us) : "-", us(s.step_us), us(timed_us), s.timer_step_ns);
}

}  // namespace mha
