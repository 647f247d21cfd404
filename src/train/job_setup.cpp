// SetUpJob: backend, stores, plans and the start-up line.
#include "train/job_setup.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "model/onednn_gemm.h"
#include "strata/common/cpu_isa.h"
#include "strata/common/process_memory.h"
#include "strata/common/row.h"
#include "strata/data/chunk_reader.h"
#include "strata/data/input_files.h"
#include "strata/model/dense_model.h"
#include "train/memory_plan.h"
#include "train/row_stores.h"

namespace strata {
namespace {

// --format parquet: every input file is Parquet.
Status CheckAllParquet(const ShardPlan& plan) {
  for (const InputFile& f : plan.files()) {
    if (f.encoding != FileEncoding::kParquet) return Status::InvalidArgument("--format parquet: " + f.path + " is not a Parquet file");
  }
  return Status::OK();
}

// Whole files dealt out in turn: each worker needs one at least. Told before the files are
// scanned, which is the plan's longest part.
Status CheckFilesForWorkers(size_t files, int workers, int ranks, const TrainOptions& o) {
  if (files >= static_cast<size_t>(workers)) return Status::OK();
  return Status::InvalidArgument(fmt::format(
      "--worker-input files: {} training file{} for {} workers ({} ranks x --workers-per-rank {}); a worker "
      "would read nothing: give at least as many files, or --worker-input stripes",
      files, files == 1 ? "" : "s", workers, ranks, o.workers_per_rank));
}

// The plan of `how`: stripes of --batch-size lines, a contiguous part a worker, or whole
// files (refused when a worker would read nothing).
Status PlanFor(WorkerInput how, const std::vector<std::string>& files, int workers, int ranks, const TrainOptions& o,
               ShardPlan* plan) {
  switch (how) {
    case WorkerInput::kStripes:
      return PlanShards(files, workers, static_cast<uint64_t>(o.batch_size), plan);
    case WorkerInput::kParts:
      return PlanShards(files, workers, kContiguousChunks, plan);
    case WorkerInput::kFiles:
      STRATA_RETURN_IF_ERROR(CheckFilesForWorkers(files.size(), workers, ranks, o));
      return PlanWholeFiles(files, workers, plan);
  }
  return Status::InvalidArgument("unknown --worker-input");
}

// Rank 0 expands the globs, plans the shards and checks the files' headers against the
// schema; every rank receives the same plan.
Status PlanInput(Comm* comm, const std::vector<std::string>& patterns, int workers, WorkerInput how,
                 const TrainOptions& o, ShardPlan* plan) {
  std::string bytes;
  Status local;
  if (comm->rank() == 0) {
    std::vector<std::string> files;
    local = ExpandInputs(patterns, &files);
    if (local.ok()) local = PlanFor(how, files, workers, comm->size(), o, plan);
    if (local.ok() && o.format == "parquet") local = CheckAllParquet(*plan);
    if (local.ok()) local = CheckHeaders(*plan, o.input);
    if (local.ok()) bytes = plan->Serialize();
  }
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(local));
  STRATA_RETURN_IF_ERROR(comm->Broadcast(&bytes, 0));
  return ShardPlan::Deserialize(bytes, plan);
}

// --device cuda, or auto with a GPU visible.
bool UsesCuda(const TrainOptions& o) { return o.device == "cuda" || (o.device == "auto" && CudaDeviceCount() > 0); }

// --dense-precision bf16 holds only where every rank's CPU has bf16 instructions, so that
// every rank computes alike; the CUDA backend computes in fp32 and refuses it.
Status ResolveDensePrecision(const TrainOptions& o, Comm* comm, DensePrecision* out) {
  *out = o.dense_precision;
  if (o.dense_precision == DensePrecision::kFp32) return Status::OK();
  if (UsesCuda(o)) return Status::InvalidArgument("--dense-precision bf16 is for the CPU backend; the CUDA backend computes in fp32");
  int64_t lacks[1] = {OnednnGemm::Bf16Supported() ? 0 : 1};
  STRATA_RETURN_IF_ERROR(comm->AllreduceMax(lacks, 1));
  if (lacks[0] == 0) return Status::OK();
  *out = DensePrecision::kFp32;
  if (comm->rank() == 0) {
    fmt::print("{}: --dense-precision bf16: a rank's CPU has no bf16 instructions (AVX512-BF16 or AMX); "
               "the MLP computes in fp32\n",
               o.program);
  }
  return Status::OK();
}

// A host worker with more than one thread runs its products on an OpenMP team, whose idle
// threads spin unless OMP_WAIT_POLICY is passive; the OpenMP runtime reads it when it
// loads, so rank 0 can only tell the user.
void NoteOpenMpWaitPolicy(const TrainOptions& o, const HbmOptions& backend, const Comm& comm) {
  if (comm.rank() != 0 || UsesCuda(o) || backend.gemm_threads() == 1 || std::getenv("OMP_WAIT_POLICY")) return;
  fmt::print("{}: OMP_WAIT_POLICY is not set: the MLP's products run on {} OpenMP threads a worker, whose "
             "idle threads spin and slow the pipeline's stages; set OMP_WAIT_POLICY=PASSIVE in every rank's "
             "environment\n",
             o.program, backend.gemm_threads());
}

// The CUDA devices of this rank's workers (CudaDevicesFor over --cuda-devices and the rank's
// place on its node); none where no GPU is visible, which the backend then reports.
Status PlaceCudaWorkers(const TrainOptions& o, const Comm& comm, CudaPlacement* out) {
  const int visible = CudaDeviceCount();
  if (visible == 0) return Status::OK();
  return CudaDevicesFor(o.workers_per_rank, o.cuda_devices, comm.local_rank(), comm.local_size(), visible, out);
}

// The backend's options: it computes on f32 rows (NewBackend converts those of another
// --row-dtype).
HbmOptions BackendOptions(const TrainOptions& o, int threads, DensePrecision precision, const CudaPlacement& placement) {
  HbmOptions ho;
  ho.dense_precision = precision;
  ho.spec = o.model;
  ho.spec.row_dtype = RowDtype::kFp32;
  ho.workers = o.workers_per_rank;
  ho.devices = placement.devices;
  ho.threads = threads;
  ho.max_batch = o.batch_size;
  return ho;
}

// WithRowDtype converts the rows of another --row-dtype than the backend's f32.
Status NewBackend(const TrainOptions& o, const HbmOptions& ho, std::unique_ptr<HbmPs>* out) {
  std::unique_ptr<HbmPs> inner;
  if (UsesCuda(o)) {
    STRATA_RETURN_IF_ERROR(NewCudaHbmPs(ho, &inner));
  } else {
    inner = NewHostHbmPs(ho);
  }
  *out = WithRowDtype(std::move(inner), RowLayoutOf(o.model));
  return Status::OK();
}

Status NewServer(const TrainOptions& o, int rank, int threads, std::unique_ptr<ShardServer>* out) {
  RowStores stores;
  STRATA_RETURN_IF_ERROR(OpenRowStores(o, rank, RowLayoutOf(o.model).bytes(), threads, &stores));
  *out = std::make_unique<ShardServer>(o.model, std::move(stores.store), stores.mem, stores.ssd, threads);
  return Status::OK();
}

// An output directory this rank can write in: created when missing, then probed with a
// file, so that a bad path fails the job before training instead of losing the run.
Status CheckWritableDir(const char* flag, const std::string& dir, int rank) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError(fmt::format("{} {}: cannot create the directory: {}", flag, dir, ec.message()));
  const std::string probe = fmt::format("{}/.strata-write-probe-{}-{}", dir, rank, ::getpid());
  const int fd = ::open(probe.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd < 0) return ErrnoStatus(fmt::format("{} {}: cannot write in the directory", flag, dir), errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return Status::OK();
}

Status CheckOutputDirs(const TrainOptions& o, int rank) {
  const std::pair<const char*, const std::string*> dirs[] = {
      {"--checkpoint-dir", &o.checkpoint_dir}, {"--export-delta-dir", &o.export_delta_dir}, {"--export-rows", &o.export_rows}};
  for (const auto& [flag, dir] : dirs) {
    if (!dir->empty()) STRATA_RETURN_IF_ERROR(CheckWritableDir(flag, *dir, rank));
  }
  return Status::OK();
}

// The dense model and its buffers must fit in this machine's memory: a width typed with a
// zero too many is refused here, naming the flags, not by std::bad_alloc mid-setup.
// Counted: parameters, Adam's two moments, the reduced gradient and one gradient and one
// set of activations and their gradients per local worker.
Status CheckDenseModelFits(const TrainOptions& o) {
  const DenseModel model(o.model);
  const double need = DenseModelBytes(o, o.workers_per_rank);
  const double have = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  if (have <= 0 || need <= have) return Status::OK();
  std::string widths;
  for (int w : o.model.mlp) {
    if (!widths.empty()) widths += ',';
    widths += std::to_string(w);
  }
  return Status::InvalidArgument(fmt::format(
      "--mlp {} with --batch-size {} and --workers-per-rank {}: the dense model ({} parameters) and its buffers "
      "need {:.1f} GB per rank, more than this machine's {:.1f} GB of memory",
      widths, o.batch_size, o.workers_per_rank, model.num_params(), need / 1e9, have / 1e9));
}

// The backend, the stores, and a pool of one thread per local worker.
Status SetUpRank(const TrainOptions& o, Comm* comm, JobParts* out) {
  out->threads = ThreadsOfRank(o, comm->local_size());
  out->pool = std::make_unique<ThreadPool>(std::min(out->threads, o.workers_per_rank));
  out->workers = comm->size() * o.workers_per_rank;
  if (o.pipeline && !MpiSession::ThreadMultiple()) {
    return Status::InvalidArgument("--pipeline on needs MPI_THREAD_MULTIPLE, which this MPI does not provide; use --pipeline off");
  }
  STRATA_RETURN_IF_ERROR(CheckDenseModelFits(o));
  STRATA_RETURN_IF_ERROR(ResolveDensePrecision(o, comm, &out->dense_precision));
  if (!UsesCuda(o) && !o.cuda_devices.empty()) {
    return Status::InvalidArgument("--cuda-devices is for the CUDA backend (--device cuda)");
  }
  if (!UsesCuda(o) && o.collectives == "nccl") {
    return Status::InvalidArgument("--collectives nccl is for the CUDA backend (--device cuda)");
  }
  if (UsesCuda(o) && out->placement.devices.empty()) STRATA_RETURN_IF_ERROR(PlaceCudaWorkers(o, *comm, &out->placement));
  const HbmOptions backend = BackendOptions(o, out->threads, out->dense_precision, out->placement);
  STRATA_RETURN_IF_ERROR(NewBackend(o, backend, &out->hbm));
  NoteOpenMpWaitPolicy(o, backend, *comm);
  return NewServer(o, comm->rank(), out->threads, &out->server);
}

// How several workers share the training input, for the start line; empty for one.
std::string WorkerInputText(const TrainOptions& o, const JobParts& p) {
  if (p.workers == 1) return "";
  if (o.worker_input == WorkerInput::kParts) return " (a contiguous part a worker)";
  const size_t files = p.train_plan.files().size();
  if (o.worker_input == WorkerInput::kFiles) {
    return fmt::format(" (whole files dealt out in turn: {} to {} a worker)", files / p.workers,
                       (files + p.workers - 1) / p.workers);
  }
  const bool compressed = std::any_of(p.train_plan.files().begin(), p.train_plan.files().end(),
                                      [](const InputFile& f) { return f.encoding != FileEncoding::kPlain; });
  const char* less = files >= static_cast<size_t>(p.workers) ? "--worker-input files or parts" : "--worker-input parts";
  return fmt::format(" (stripes of {} dealt out in turn{})", p.train_plan.stripe_lines(),
                     compressed ? fmt::format("; each worker decompresses all of a gzip or Parquet file: {} for less", less)
                                : "");
}

void PrintStartLine(const TrainOptions& o, const Comm& comm, const JobParts& p) {
  const std::string widths = o.input.WidthsText();
  fmt::print("{}: {} ranks x {} workers ({} model{}, {} backend{}, {} threads/rank, {} kernels, {}, rows of {} B with {} state{}), "
             "{} train lines{}, {} eval lines\n",
             o.program, comm.size(), o.workers_per_rank, ModelKindName(o.model.kind), widths.empty() ? "" : ", " + widths, p.hbm->name(),
             p.dense_precision == DensePrecision::kBf16 ? " with bf16 MLP products" : "", p.threads, CpuIsaName(DetectedIsa()),
             p.server->caches() ? fmt::format("MEM-PS {} GB over SSD-PS in {}", o.mem_cache_gb, o.ssd_dir)
                                : std::string("rows in DRAM"),
             RowLayoutOf(o.model).bytes(), SparseOptimizerName(o.model.sparse_optimizer),
             o.model.row_dtype == RowDtype::kFp32 ? "" : fmt::format(", {} embeddings", RowDtypeName(o.model.row_dtype)),
             p.train_plan.total_lines(), WorkerInputText(o, p), p.has_eval ? p.eval_plan.total_lines() : 0);
  std::fflush(stdout);
}

}  // namespace

// Training reads stripes of --batch-size lines, so that a step trains on consecutive lines
// (--worker-input parts: contiguous parts; files: whole files); evaluation reads contiguous
// parts, so that predictions gathered in worker order are in input order (strata-predict
// writes them so).
Status PlanJobInput(const TrainOptions& o, Comm* comm, JobParts* out) {
  out->workers = comm->size() * o.workers_per_rank;
  STRATA_RETURN_IF_ERROR(PlanInput(comm, o.train, out->workers, o.worker_input, o, &out->train_plan));
  out->has_eval = !o.eval.empty();
  if (out->has_eval) {
    STRATA_RETURN_IF_ERROR(PlanInput(comm, o.eval, out->workers, WorkerInput::kParts, o, &out->eval_plan));
  }
  return Status::OK();
}

Status PlanJobMemory(const TrainOptions& o, Comm* comm, JobParts* parts) {
  KeySample keys;
  STRATA_RETURN_IF_ERROR(SampleKeys(o, parts->train_plan, comm, &keys, &parts->read_ahead));
  ReturnFreedMemory();
  const bool gpu = UsesCuda(o);
  // The passes read ahead wait for training, and the plan counts them among its passes read
  // ahead: the process at start is what the rank holds beside them.
  const int64_t base_rss = std::max<int64_t>(0, CurrentRssBytes() - static_cast<int64_t>(keys.read_ahead_bytes));
  const MemoryPlan plan = PlanMemory(o, keys, base_rss, gpu);
  // The node's available memory is shared by its ranks.
  const double dram = o.dram_limit_gb > 0 ? o.dram_limit_gb * 1e9
                                          : static_cast<double>(AvailableMemoryBytes()) / std::max(1, comm->local_size());
  if (gpu) STRATA_RETURN_IF_ERROR(comm->AgreeOn(PlaceCudaWorkers(o, *comm, &parts->placement)));  // SetUpJob keeps it
  // The plan's HBM is one worker's; workers sharing a GPU (--cuda-devices) share its memory.
  const double hbm = gpu ? static_cast<double>(CudaMinFreeBytes(parts->placement.devices)) /
                               std::max(1, MostWorkersOnOneDevice(parts->placement))
                         : 0;
  parts->planned_dram_bytes = static_cast<int64_t>(plan.Total(plan.dram));
  if (comm->rank() == 0) {
    fmt::print("{}", FormatPlan(plan, keys, dram, hbm));
    std::fflush(stdout);
  }
  return comm->AgreeOn(CheckPlanFits(plan, dram, hbm));
}

Status ConnectStepCollectives(const TrainOptions& o, Comm* comm, JobParts* parts) {
  if (!UsesCuda(o) || o.collectives == "mpi" || parts->workers == 1) return Status::OK();
  STRATA_RETURN_IF_ERROR(parts->hbm->ConnectDevices(comm));
  if (comm->rank() == 0) {
    fmt::print("{}: a step's sums over NCCL ({} ranks x {} workers): dense gradients summed on the GPUs, "
               "sparse records between ranks\n",
               o.program, comm->size(), o.workers_per_rank);
    std::fflush(stdout);
  }
  return Status::OK();
}

Status SetUpJob(const TrainOptions& o, Comm* comm, JobParts* out) {
  Status local = CheckOutputDirs(o, comm->rank());
  if (local.ok() && comm->rank() == 0 && !o.checkpoint_dir.empty()) {
    local = DirLock::Acquire(o.checkpoint_dir, "--checkpoint-dir", &out->checkpoint_lock);
  }
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(local));
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(SetUpRank(o, comm, out)));
  if (comm->rank() == 0) PrintStartLine(o, *comm, *out);
  if (!out->placement.devices.empty()) {
    fmt::print("{}: rank {} trains on {} ({})\n", o.program, comm->rank(), DescribePlacement(out->placement),
               CudaDeviceName(out->placement.devices.front()));
    std::fflush(stdout);
  }
  return Status::OK();
}

}  // namespace strata
