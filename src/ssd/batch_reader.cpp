// BatchReader: io_uring submission/completion loop over a fixed buffer pool. Where the
// kernel refuses io_uring (some sandboxes), reads fall back to pread one op at a time.
#include "ssd/batch_reader.h"

#include <cerrno>
#include <cstring>

namespace strata::ssd {
namespace {

constexpr int kOpShift = 16;  // user_data = op << kOpShift | buffer

}  // namespace

BatchReader::BatchReader(int queue_depth, size_t max_read_bytes)
    : depth_(queue_depth < 1 ? 1 : (queue_depth > 4096 ? 4096 : queue_depth)),
      max_read_bytes_(max_read_bytes),
      buffers_(NewAlignedBuffer(static_cast<size_t>(depth_) * max_read_bytes)) {
  ring_ok_ = io_uring_queue_init(static_cast<unsigned>(depth_), &ring_, 0) == 0;
}

BatchReader::~BatchReader() {
  if (ring_ok_) io_uring_queue_exit(&ring_);
}

Status BatchReader::Submit(const std::vector<ReadOp>& ops, size_t op, size_t buffer) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) return Status::IOError("io_uring: submission queue full");
  io_uring_prep_read(sqe, ops[op].fd, buffers_.get() + buffer * max_read_bytes_, ops[op].length,
                     ops[op].offset);
  io_uring_sqe_set_data64(sqe, (static_cast<uint64_t>(op) << kOpShift) | buffer);
  return Status::OK();
}

// Without io_uring: one pread after another into the first buffer.
Status BatchReader::RunSync(const std::vector<ReadOp>& ops, const DoneFn& done) {
  for (size_t i = 0; i < ops.size(); ++i) {
    size_t got = 0;
    STRATA_RETURN_IF_ERROR(PreadAll(ops[i].fd, buffers_.get(), ops[i].length, ops[i].offset, *ops[i].path, &got));
    if (got < ops[i].length) return Status::Corruption(*ops[i].path + ": short read at offset " + std::to_string(ops[i].offset));
    STRATA_RETURN_IF_ERROR(done(i, buffers_.get()));
  }
  return Status::OK();
}

// The outcome of a completed read of r into buf (res: the completion's result). A short
// read from io_uring is either end of file or an interrupted transfer: it is finished
// synchronously to tell which.
Status BatchReader::Complete(const ReadOp& r, int res, uint8_t* buf) {
  if (res < 0) return ErrnoStatus("read " + *r.path, -res);
  if (static_cast<uint32_t>(res) >= r.length) return Status::OK();
  size_t got = 0;
  const size_t have = static_cast<size_t>(res);
  STRATA_RETURN_IF_ERROR(PreadAll(r.fd, buf + have, r.length - have, r.offset + have, *r.path, &got));
  if (have + got < r.length) {
    return Status::Corruption(*r.path + ": truncated, short read at offset " + std::to_string(r.offset));
  }
  return Status::OK();
}

struct BatchReader::Flight {
  size_t next = 0;       // the first op not submitted
  size_t in_flight = 0;  // reads submitted and not completed
  std::vector<size_t> free_buffers;
  Status first_error;
};

Status BatchReader::Run(const std::vector<ReadOp>& ops, const DoneFn& done) {
  if (!ring_ok_) return RunSync(ops, done);
  Flight flight;
  for (int b = depth_ - 1; b >= 0; --b) flight.free_buffers.push_back(static_cast<size_t>(b));
  while (flight.in_flight > 0 || (flight.next < ops.size() && flight.first_error.ok())) {
    SubmitWhileFree(ops, &flight);
    if (flight.in_flight == 0) break;
    STRATA_RETURN_IF_ERROR(ReapCompletions(ops, done, &flight));
  }
  return flight.first_error;
}

void BatchReader::SubmitWhileFree(const std::vector<ReadOp>& ops, Flight* flight) {
  while (flight->next < ops.size() && !flight->free_buffers.empty() && flight->first_error.ok()) {
    const Status st = Submit(ops, flight->next, flight->free_buffers.back());
    if (!st.ok()) {
      flight->first_error = st;
      return;
    }
    flight->free_buffers.pop_back();
    ++flight->next;
    ++flight->in_flight;
  }
}

Status BatchReader::ReapCompletions(const std::vector<ReadOp>& ops, const DoneFn& done, Flight* flight) {
  const int rc = io_uring_submit_and_wait(&ring_, 1);
  if (rc < 0 && rc != -EINTR) return Status::IOError(std::string("io_uring_submit: ") + std::strerror(-rc));
  io_uring_cqe* cqe = nullptr;
  unsigned head = 0;
  unsigned seen = 0;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    ++seen;
    const uint64_t data = io_uring_cqe_get_data64(cqe);
    const size_t op = static_cast<size_t>(data >> kOpShift);
    const size_t buffer = static_cast<size_t>(data & ((1u << kOpShift) - 1));
    uint8_t* buf = buffers_.get() + buffer * max_read_bytes_;
    Status st = Complete(ops[op], cqe->res, buf);
    if (st.ok() && flight->first_error.ok()) st = done(op, buf);
    if (!st.ok() && flight->first_error.ok()) flight->first_error = st;
    flight->free_buffers.push_back(buffer);
    --flight->in_flight;
  }
  io_uring_cq_advance(&ring_, seen);
  return Status::OK();
}

}  // namespace strata::ssd
