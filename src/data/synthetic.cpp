// GenerateSynthetic: draws rows from the Zipf samplers and the ground truth, writes them as
// Criteo TSV through a buffered writer, calibrates the bias and computes the oracle AUC.
#include "strata/data/synthetic.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "data/ground_truth.h"
#include "data/zipf.h"
#include "strata/common/partition.h"
#include "strata/metrics/auc.h"

namespace strata {
namespace {

using data_internal::GroundTruth;
using data_internal::SyntheticRow;
using data_internal::ZipfSampler;

// Stream salts: each split has its own random stream, so eval does not move with train_rows.
constexpr uint64_t kTrainStream = 0x7472'6169'6e00'0001ULL;
constexpr uint64_t kEvalStream = 0x6576'616c'0000'0002ULL;
constexpr uint64_t kCalibrationStream = 0x6361'6c69'6200'0003ULL;
constexpr uint64_t kCalibrationRows = 20000;

// splitmix64 stream: fast, and every output is a pure function of (seed, index).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix64(state_++); }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

void DrawRow(const SyntheticOptions& o, const GroundTruth& truth, const ZipfSampler& zipf, Rng* rng,
             SyntheticRow* row) {
  auto uniform = [rng] { return rng->Uniform(); };
  for (int j = 0; j < o.num_dense; ++j) {
    row->int_empty[static_cast<size_t>(j)] = rng->Uniform() < o.empty_rate;
    row->ints[static_cast<size_t>(j)] = truth.DenseValue(j, 1.0 - rng->Uniform());
  }
  for (int s = 0; s < o.num_slots; ++s) {
    bool empty = rng->Uniform() < o.empty_rate;
    row->ranks[static_cast<size_t>(s)] = empty ? 0 : zipf.Sample(uniform);
  }
}

// Appends one TSV line; `out` has room for it (see kMaxRowBytes).
char* FormatRow(const SyntheticRow& row, bool label, const GroundTruth& truth, char* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  *out++ = label ? '1' : '0';
  for (size_t j = 0; j < row.ints.size(); ++j) {
    *out++ = '\t';
    if (!row.int_empty[j]) out = std::to_chars(out, out + 24, row.ints[j]).ptr;
  }
  const int digits = truth.token_digits();
  for (size_t s = 0; s < row.ranks.size(); ++s) {
    *out++ = '\t';
    if (row.ranks[s] == 0) continue;
    uint64_t token = truth.Token(static_cast<int>(s), row.ranks[s]);
    for (int d = digits - 1; d >= 0; --d) out[digits - 1 - d] = kDigits[(token >> (4 * d)) & 0xf];
    out += digits;
  }
  *out++ = '\n';
  return out;
}

class FileWriter {
 public:
  FileWriter() : buf_(size_t{1} << 20) {}
  ~FileWriter() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Open(const std::string& path) {
    path_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return ErrnoStatus("cannot create " + path, errno);
    return Status::OK();
  }
  // A span of at least `n` writable bytes; Commit(end) marks them written.
  Status Reserve(size_t n, char** p) {
    if (buf_.size() - used_ < n) STRATA_RETURN_IF_ERROR(Flush());
    *p = buf_.data() + used_;
    return Status::OK();
  }
  void Commit(char* end) { used_ = static_cast<size_t>(end - buf_.data()); }
  Status Close() {
    STRATA_RETURN_IF_ERROR(Flush());
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return ErrnoStatus("cannot write " + path_, errno);
    return Status::OK();
  }

 private:
  Status Flush() {
    size_t done = 0;
    while (done < used_) {
      ssize_t w = ::write(fd_, buf_.data() + done, used_ - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return ErrnoStatus("cannot write " + path_, errno);
      done += static_cast<size_t>(w);
    }
    used_ = 0;
    return Status::OK();
  }
  std::string path_;
  int fd_ = -1;
  std::vector<char> buf_;
  size_t used_ = 0;
};

double Sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// Calibrates the truth's scales and bias on rows of a stream of their own.
void Calibrate(const SyntheticOptions& o, GroundTruth* truth, const ZipfSampler& zipf, SyntheticRow* row) {
  Rng rng(Mix64(o.seed ^ kCalibrationStream));
  std::vector<data_internal::LogitParts> sample;
  for (uint64_t i = 0; i < kCalibrationRows; ++i) {
    DrawRow(o, *truth, zipf, &rng, row);
    sample.push_back(truth->Parts(*row));
  }
  truth->Calibrate(sample, o.ctr);
}

// Writes one split; keeps each row's true probability and label when `probs` is given.
Status WriteSplit(const SyntheticOptions& o, const GroundTruth& truth, const ZipfSampler& zipf, uint64_t rows,
                  uint64_t stream, const std::string& path, SyntheticRow* row, uint64_t* clicks,
                  std::vector<float>* probs, std::vector<float>* labels) {
  const size_t max_row_bytes = 2 + static_cast<size_t>(o.num_dense) * 22 + static_cast<size_t>(o.num_slots) * 17;
  FileWriter out;
  STRATA_RETURN_IF_ERROR(out.Open(path));
  Rng rng(Mix64(o.seed ^ stream));
  *clicks = 0;
  for (uint64_t i = 0; i < rows; ++i) {
    DrawRow(o, truth, zipf, &rng, row);
    double p = Sigmoid(truth.Logit(*row));
    bool label = rng.Uniform() < p;
    *clicks += label ? 1 : 0;
    if (probs != nullptr) {
      probs->push_back(static_cast<float>(p));
      labels->push_back(label ? 1.0f : 0.0f);
    }
    char* p_out = nullptr;
    STRATA_RETURN_IF_ERROR(out.Reserve(max_row_bytes, &p_out));
    out.Commit(FormatRow(*row, label, truth, p_out));
  }
  return out.Close();
}

Status WriteOracleJson(const std::string& path, const SyntheticOptions& o, const SyntheticSummary& s) {
  char text[512];
  int n = std::snprintf(text, sizeof(text),
                        "{\"oracle_auc\":%.17g,\"eval_rows\":%llu,\"train_rows\":%llu,\"seed\":%llu,"
                        "\"train_ctr\":%.17g,\"eval_ctr\":%.17g,\"slots\":%d,\"dense\":%d,"
                        "\"cardinality\":%llu,\"zipf\":%.17g,\"empty_rate\":%.17g}\n",
                        s.oracle_auc, static_cast<unsigned long long>(s.eval_rows),
                        static_cast<unsigned long long>(s.train_rows), static_cast<unsigned long long>(o.seed),
                        s.train_ctr, s.eval_ctr, o.num_slots, o.num_dense,
                        static_cast<unsigned long long>(o.cardinality), o.zipf, o.empty_rate);
  FileWriter out;
  STRATA_RETURN_IF_ERROR(out.Open(path));
  char* p = nullptr;
  STRATA_RETURN_IF_ERROR(out.Reserve(static_cast<size_t>(n), &p));
  std::copy(text, text + n, p);
  out.Commit(p + n);
  return out.Close();
}

}  // namespace

Status SyntheticOptions::Validate() const {
  if (num_slots < 1 || num_slots > 255) return Status::InvalidArgument("--slots must be in [1, 255]");
  if (num_dense < 0 || num_dense > 1000) return Status::InvalidArgument("--dense must be in [0, 1000]");
  if (cardinality < 1 || cardinality > (uint64_t{1} << 52)) {
    return Status::InvalidArgument("--cardinality must be in [1, 2^52]");
  }
  if (!(zipf > 0 && zipf <= 10)) return Status::InvalidArgument("--zipf must be in (0, 10]");
  if (!(empty_rate >= 0 && empty_rate < 1)) return Status::InvalidArgument("--empty-rate must be in [0, 1)");
  if (!(ctr > 0 && ctr < 1)) return Status::InvalidArgument("--ctr must be in (0, 1)");
  if (eval_rows < 2) return Status::InvalidArgument("--eval-rows must be >= 2 (the oracle AUC needs both labels)");
  return Status::OK();
}

Status GenerateSynthetic(const SyntheticOptions& options, const std::string& out_dir, SyntheticSummary* summary) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return Status::IOError("cannot create directory " + out_dir + ": " + ec.message());

  GroundTruth truth(options);
  ZipfSampler zipf(options.cardinality, options.zipf);
  SyntheticRow row;
  row.ranks.resize(static_cast<size_t>(options.num_slots));
  row.ints.resize(static_cast<size_t>(options.num_dense));
  row.int_empty.resize(static_cast<size_t>(options.num_dense));
  Calibrate(options, &truth, zipf, &row);

  SyntheticSummary s;
  s.train_rows = options.train_rows;
  s.eval_rows = options.eval_rows;
  uint64_t train_clicks = 0, eval_clicks = 0;
  std::vector<float> probs, labels;
  probs.reserve(options.eval_rows);
  labels.reserve(options.eval_rows);
  STRATA_RETURN_IF_ERROR(WriteSplit(options, truth, zipf, options.train_rows, kTrainStream,
                                    out_dir + "/train.tsv", &row, &train_clicks, nullptr, nullptr));
  STRATA_RETURN_IF_ERROR(WriteSplit(options, truth, zipf, options.eval_rows, kEvalStream,
                                    out_dir + "/eval.tsv", &row, &eval_clicks, &probs, &labels));
  s.train_ctr = options.train_rows > 0 ? static_cast<double>(train_clicks) / static_cast<double>(options.train_rows) : 0;
  s.eval_ctr = static_cast<double>(eval_clicks) / static_cast<double>(options.eval_rows);
  s.oracle_auc = ExactAuc(probs.data(), labels.data(), probs.size());
  if (std::isnan(s.oracle_auc)) {
    return Status::InvalidArgument("eval split has only one label class; raise --eval-rows or change --ctr");
  }
  STRATA_RETURN_IF_ERROR(WriteOracleJson(out_dir + "/oracle.json", options, s));
  *summary = s;
  return Status::OK();
}

}  // namespace strata
