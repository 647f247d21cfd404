// Cache policy replay (strata/mem/policy_sim.h): trace building and the four policies.
#include "strata/mem/policy_sim.h"

#include <algorithm>
#include <list>
#include <queue>
#include <unordered_set>
#include <utility>

#include "strata/mem/cache_policy.h"

namespace strata {

size_t KeyTrace::DistinctKeys() const {
  std::unordered_set<uint64_t> seen(keys.begin(), keys.end());
  return seen.size();
}

KeyTraceBuilder::KeyTraceBuilder(bool per_example) : per_example_(per_example) {
  trace_.pass_begin.push_back(0);
}

void KeyTraceBuilder::AddExample(const uint64_t* keys, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!per_example_) {
      auto [it, fresh] = in_pass_.try_emplace(keys[i], trace_.keys.size());
      if (!fresh) {
        ++trace_.weights[it->second];
        continue;
      }
    }
    trace_.keys.push_back(keys[i]);
    trace_.weights.push_back(1);
  }
}

void KeyTraceBuilder::EndPass() {
  in_pass_.clear();
  if (trace_.keys.size() > trace_.pass_begin.back()) trace_.pass_begin.push_back(trace_.keys.size());
}

KeyTrace KeyTraceBuilder::Finish() {
  EndPass();
  KeyTrace out = std::move(trace_);
  trace_ = KeyTrace{};
  trace_.pass_begin.push_back(0);
  return out;
}

SimResult SimulateMemPs(const KeyTrace& trace, size_t capacity, FreqSource freq, int lookahead) {
  SimResult r;
  r.accesses = trace.accesses();
  CachePolicy policy;
  std::unordered_map<uint64_t, uint64_t> counter;  // the rows' counters, cached or not
  CachePolicy::Victim victim;
  const int passes = static_cast<int>(trace.passes());
  auto pin_pass = [&](int q) {
    if (q >= passes) return;
    for (size_t i = trace.pass_begin[q]; i < trace.pass_begin[q + 1]; ++i) policy.PinKey(trace.keys[i], q);
  };
  for (int q = 0; q < lookahead; ++q) pin_pass(q);
  for (int p = 0; p < passes; ++p) {
    policy.BeginPass(p);
    pin_pass(p + lookahead);
    for (size_t i = trace.pass_begin[p]; i < trace.pass_begin[p + 1]; ++i) {
      const uint64_t key = trace.keys[i];
      uint64_t& count = counter[key];
      count += trace.weights[i];
      CachePolicy::Handle h = policy.Find(key);
      if (h != CachePolicy::kNone) {
        ++r.hits;
      } else {
        h = policy.Insert(key);
      }
      policy.Touch(h, freq == FreqSource::kRowCounter ? count : policy.PassCount(h));
      while (policy.size() > capacity && policy.PopVictim(&victim, CachePolicy::Pins::kMayEvict)) {
      }
    }
    policy.UnpinPass(p);
  }
  return r;
}

SimResult SimulateLru(const KeyTrace& trace, size_t capacity) {
  SimResult r;
  r.accesses = trace.accesses();
  std::list<uint64_t> order;  // front = most recent
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
  for (uint64_t key : trace.keys) {
    auto it = where.find(key);
    if (it != where.end()) {
      ++r.hits;
      order.splice(order.begin(), order, it->second);
      continue;
    }
    order.push_front(key);
    where.emplace(key, order.begin());
    if (order.size() > capacity) {
      where.erase(order.back());
      order.pop_back();
    }
  }
  return r;
}

SimResult SimulateBelady(const KeyTrace& trace, size_t capacity) {
  SimResult r;
  const size_t n = trace.accesses();
  r.accesses = n;
  // next[i]: the next access of keys[i] after i; unique per access (n + i when never).
  std::vector<size_t> next(n);
  std::unordered_map<uint64_t, size_t> later;
  for (size_t i = n; i-- > 0;) {
    auto it = later.find(trace.keys[i]);
    next[i] = it == later.end() ? n + i : it->second;
    later[trace.keys[i]] = i;
  }
  std::unordered_map<uint64_t, size_t> resident;  // key -> its next use
  std::priority_queue<std::pair<size_t, uint64_t>> farthest;  // stale entries skipped
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = trace.keys[i];
    auto [it, fresh] = resident.try_emplace(key, next[i]);
    if (!fresh) ++r.hits;
    it->second = next[i];
    farthest.emplace(next[i], key);
    while (resident.size() > capacity) {
      auto [use, victim] = farthest.top();
      farthest.pop();
      auto v = resident.find(victim);
      if (v != resident.end() && v->second == use) resident.erase(v);
    }
  }
  return r;
}

SimResult SimulateFrequencyOracle(const KeyTrace& trace, size_t capacity) {
  SimResult r;
  r.accesses = trace.accesses();
  std::unordered_map<uint64_t, uint64_t> count;
  for (uint64_t key : trace.keys) ++count[key];
  std::vector<uint64_t> counts;
  counts.reserve(count.size());
  for (const auto& [key, c] : count) counts.push_back(c);
  const size_t kept = std::min(capacity, counts.size());
  std::partial_sort(counts.begin(), counts.begin() + kept, counts.end(), std::greater<>());
  for (size_t i = 0; i < kept; ++i) r.hits += counts[i] - 1;
  return r;
}

}  // namespace strata
