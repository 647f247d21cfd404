# Strata: one entry point. make | make run | make test | make bench | make bench-gpu | make crash
# | make fuzz | make deps | make gpu-bundle | make gpu-check
# Switches (?=): CUDA=auto|0|1, SM (CUDA arch), DEBUG=1, ASAN=1, TSAN=1 (ThreadSanitizer; no
# CUDA), FUZZ=1 (clang, libFuzzer instrumentation, ASan and UBSan; no CUDA). Builds go to
# $(BUILD).

CXX      ?= g++
DEBUG    ?= 0
ASAN     ?= 0
TSAN     ?= 0
FUZZ     ?= 0
FUZZ_SECONDS ?= 60
CUDA     ?= auto
SM       ?= 90
NVCC     ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
NP       ?= 2
CRASH_POINTS  ?= 1000
TRAINER_KILLS ?= 50
JOBS     ?= $(shell nproc)

ifeq ($(DEBUG),1)
  OPT := -O0 -g
  BUILD ?= build-debug
else
  OPT := -O3 -march=x86-64-v2 -g1
  BUILD ?= build
endif
ifeq ($(ASAN),1)
  OPT += -fsanitize=address,undefined -fno-omit-frame-pointer
  BUILD := $(BUILD)-asan
endif
ifeq ($(TSAN),1)
  OPT := -O1 -g -fsanitize=thread
  BUILD := $(BUILD)-tsan
  CUDA  := 0
endif

ifeq ($(FUZZ),1)
  CXX   := clang++
  OPT   := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
  BUILD := build-fuzz
  CUDA  := 0
endif

ifeq ($(CUDA),auto)
  WITH_CUDA := $(if $(and $(NVCC),$(wildcard cuda/*.cu)),1,0)
else
  WITH_CUDA := $(CUDA)
endif

MPI_CFLAGS := $(patsubst -I%,-isystem %,$(shell mpicxx --showme:compile 2>/dev/null)) -DOMPI_SKIP_MPICXX=1
MPI_LIBS   := $(shell mpicxx --showme:link 2>/dev/null)
HDF5_CFLAGS := -isystem /usr/include/hdf5/serial
HDF5_LIBS   := -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5

# WERROR= (empty) keeps warnings as warnings, for compilers newer than the tested g++ 12.
# EXTRA_CXXFLAGS/EXTRA_LDFLAGS: headers and libraries outside the system's paths
# (scripts/gpu-check.sh builds against a private prefix of unpacked packages).
WERROR   ?= -Werror
EXTRA_CXXFLAGS ?=
EXTRA_LDFLAGS  ?=
# -fno-math-errno: sqrtf and the like set no errno (nothing reads it), so the optimizer loops
# vectorize; results are unchanged, bit for bit. -ffp-contract=off: no a*b+c fused into an
# FMA, in the kernels compiled for AVX2/AVX-512 too, so every build and CPU rounds alike.
CXXFLAGS := -std=c++23 $(OPT) -fno-math-errno -ffp-contract=off -Wall -Wextra $(WERROR) -pthread -Iinclude -Isrc $(MPI_CFLAGS) $(HDF5_CFLAGS) $(EXTRA_CXXFLAGS) -MMD -MP
LDLIBS   := $(EXTRA_LDFLAGS) $(MPI_LIBS) $(HDF5_LIBS) -lopenblas -ldnnl -lgomp -lfmt -lz -luring -pthread

# Parquet input: Arrow's C++ reader from the pyarrow wheel that make deps unpacks
# (scripts/install-arrow.sh); without it the build reads no Parquet and says so.
ARROW_DIR := deps/python/pyarrow
ARROW_SOS := $(wildcard $(ARROW_DIR)/libarrow.so.* $(ARROW_DIR)/libparquet.so.*)
ifneq ($(and $(ARROW_SOS),$(wildcard $(ARROW_DIR)/include/parquet)),)
  ARROW_CFLAGS := -DSTRATA_WITH_PARQUET=1 -isystem $(ARROW_DIR)/include
  LDLIBS += -L$(ARROW_DIR) $(addprefix -l:,$(notdir $(ARROW_SOS))) -Wl,-rpath,$(abspath $(ARROW_DIR))
endif

LIB_SRCS := $(filter-out src/main.cpp,$(shell find src -name '*.cpp' | sort))
LIB_OBJS := $(LIB_SRCS:%.cpp=$(BUILD)/obj/%.o)

ifeq ($(WITH_CUDA),1)
  CUDA_SRCS := $(shell find cuda -name '*.cu' | sort)
  CUDA_OBJS := $(CUDA_SRCS:%.cu=$(BUILD)/obj/%.o)
  CXXFLAGS  += -DSTRATA_WITH_CUDA=1
  LDLIBS    += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lcublas -lnccl
  # -fmad=false: no contraction into FMAs, so kernels round as the host build (no FMA at
  # -march=x86-64-v2) and the shared update math is bitwise the same function on both.
  NVCCFLAGS := -std=c++20 -O3 -arch=sm_$(SM) -fmad=false -Iinclude -Icuda $(EXTRA_CXXFLAGS) -Xcompiler -Wall,-Wextra,$(WERROR) $(if $(WERROR),-Werror all-warnings) --expt-relaxed-constexpr -MMD -MP
endif

UNIT_SRCS := $(shell find test/unit -name '*.cpp' | sort)
UNIT_OBJS := $(UNIT_SRCS:%.cpp=$(BUILD)/obj/%.o)
MPI_TEST_SRCS := $(shell find test/mpi -name '*.cpp' 2>/dev/null | sort)
MPI_TEST_OBJS := $(MPI_TEST_SRCS:%.cpp=$(BUILD)/obj/%.o)
FUZZ_SRCS := $(shell find fuzz -name '*.cpp' | sort)
FUZZ_BINS := $(FUZZ_SRCS:fuzz/%.cpp=$(BUILD)/fuzz/%)
BENCH_SRCS := $(shell find tools/bench -name '*.cpp' | sort)
BENCH_BINS := $(BENCH_SRCS:tools/bench/%.cpp=$(BUILD)/bench/%)

TOOLS := $(BUILD)/strata-train $(BUILD)/strata-datagen $(BUILD)/strata-inspect $(BUILD)/strata-predict

.PHONY: all deps run test bench bench-gpu gpu-bundle gpu-check crash fuzz fuzz-bins clean
all: $(TOOLS) $(BENCH_BINS)

deps:
	@scripts/install-deps.sh

$(BUILD)/libstrata.a: $(LIB_OBJS) $(CUDA_OBJS)
	@mkdir -p $(@D)
	@echo "AR   $@"
	@ar rcs $@ $^

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(@D)
	@echo "CXX  $<"
	@$(CXX) $(CXXFLAGS) -c $< -o $@

# The MLP's elementwise passes and the bf16 roundings split over the OpenMP team the
# products run on.
$(BUILD)/obj/src/model/mlp.o $(BUILD)/obj/src/model/bf16_rounding.o: CXXFLAGS += -fopenmp

# Only the Parquet stream sees Arrow's headers; it rebuilds when make deps brings them.
$(BUILD)/obj/src/data/parquet_stream.o: CXXFLAGS += $(ARROW_CFLAGS)
$(BUILD)/obj/src/data/parquet_stream.o: $(wildcard deps/python/.complete-*)

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(@D)
	@echo "NVCC $<"
	@$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/strata-train: $(BUILD)/obj/src/main.o $(BUILD)/libstrata.a
	@echo "LD   $@"
	@$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS)

# The tools: strata-NAME links tools/NAME/*.cpp against the library.
define tool_rule
$(BUILD)/strata-$(1): $$(patsubst %.cpp,$$(BUILD)/obj/%.o,$$(wildcard tools/$(1)/*.cpp)) $$(BUILD)/libstrata.a
	@echo "LD   $$@"
	@$$(CXX) $$(CXXFLAGS) $$^ -o $$@ $$(LDLIBS)
endef
$(foreach tool,datagen inspect predict,$(eval $(call tool_rule,$(tool))))

$(BUILD)/bench/%: $(BUILD)/obj/tools/bench/%.o $(BUILD)/libstrata.a
	@mkdir -p $(@D)
	@echo "LD   $@"
	@$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS) $(if $(findstring ssd_bench,$@),-lrocksdb)

$(BUILD)/strata-unit-tests: $(UNIT_OBJS) $(BUILD)/libstrata.a
	@echo "LD   $@"
	@$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/strata-mpi-tests: $(MPI_TEST_OBJS) $(BUILD)/libstrata.a
	@echo "LD   $@"
	@$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS)

# Installs deps if missing, builds, generates synthetic data and trains it on 2 ranks.
run: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@BUILD=$(BUILD) NP=$(NP) scripts/run-demo.sh

test: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all $(BUILD)/strata-unit-tests $(if $(MPI_TEST_SRCS),$(BUILD)/strata-mpi-tests)
	@BUILD=$(BUILD) test/run-tests.sh

bench: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@BUILD=$(BUILD) scripts/bench.sh

# libFuzzer targets (FUZZ=1 builds): fuzz/*.cpp against the instrumented library.
$(BUILD)/fuzz/%: $(BUILD)/obj/fuzz/%.o $(BUILD)/libstrata.a
	@mkdir -p $(@D)
	@echo "LINK $@"
	@$(CXX) $(CXXFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS)

fuzz-bins: $(FUZZ_BINS)

fuzz:
	@scripts/install-deps.sh clang
	@$(MAKE) --no-print-directory FUZZ=1 -j$(JOBS) fuzz-bins
	@BUILD=build-fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

crash: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all $(BUILD)/strata-unit-tests
	@BUILD=$(BUILD) CRASH_POINTS=$(CRASH_POINTS) TRAINER_KILLS=$(TRAINER_KILLS) scripts/crash-campaign.sh

bench-gpu: deps
	@BUILD=$(BUILD) scripts/bench-gpu.sh || [ $$? -eq 77 ]  # 77: no GPU here, said in one line

# The .deb files a bare GPU machine lacks (downloaded here, into deps/gpu-bundle), and the
# one-run validation of the GPU path there (builds, cuda: tests, GPU e2e, GPU benchmarks).
gpu-bundle:
	@scripts/gpu-bundle.sh

gpu-check:
	@BUILD=$(BUILD) scripts/gpu-check.sh

clean:
	rm -rf build build-debug build-asan build-debug-asan build-tsan build-debug-tsan build-fuzz

# `make -s print-OPT`: a variable's value, for tests that compile with the build's flags.
print-%:
	@echo '$($*)'

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
