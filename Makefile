# Narwhal: the one entry point.  make | make run | make check | make bench | make install PREFIX=...
#
# Everything generated goes under build/.  Sources are found by convention:
#   adf/*.c               -> build/lib/libadf.{a,so}
#   actors/kit/*.c        -> build/lib/libkit.a (linked into every actor)
#   detector/*.c          -> build/lib/libdetector.a
#   sim/*.c               -> build/lib/libsim.a (the γ-ray Monte Carlo: the generator and the tools link it)
#   analysis/*.c          -> build/lib/libanalysis.a (`narwhal summary`; its gnuplot runner, histo's too)
#   an actor's algorithm  -> build/lib/lib<actor>.a (<ACTOR>_LIB_SRCS: no glue, no kit; the actor and the tools link it)
#   detector/tools/*.c    -> build/bin/<name>   (one program per file)
#   emulator/*.c          -> build/bin/narwhal  (emulator/main.c holds main)
#   kernels/*.cu          -> compiled when nvcc is found, linked into the actors
#   actors listed in ACTORS below -> build/actors/<name>.so
#   tools/ (benchmarks, studies, converters) listed in PROGRAMS below -> build/bin/<name>
#   tests/check_*.c       -> build/tests/check_*  (Check suites)
#   tests/actors/*.c      -> build/tests/actors/<name>.so (actors used by tests)
#   tests/tools/*.c       -> build/tests/<name>  (test-data generators)

.DEFAULT_GOAL := all
SHELL := /bin/bash

ifeq ($(SANITIZE),1)
BUILD ?= build/sanitize
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD ?= build
SANFLAGS :=
endif
CACHE := build/cache

CC ?= gcc
OPT ?= -O2
CFLAGS ?= $(OPT) -g
WARN := -Wall -Wextra -Wshadow -Wno-unused-parameter
BASEFLAGS := -std=c11 -D_DEFAULT_SOURCE -D_FILE_OFFSET_BITS=64 -fPIC -fvisibility=hidden -fopenmp -MMD -MP \
	-iquote adf -iquote actors -iquote actors/kit -iquote detector -iquote kernels -iquote emulator $(WARN) $(SANFLAGS)
BASEFLAGS += -iquote sim
BASEFLAGS += -iquote analysis
LDFLAGS_ALL := -fopenmp $(SANFLAGS)

# pkg-config is asked once, when a recipe first needs the answer (after `deps` ran).
XML_CFLAGS = $(eval XML_CFLAGS := $(shell pkg-config --cflags libxml-2.0 2>/dev/null))$(XML_CFLAGS)
XML_LIBS = $(eval XML_LIBS := $(shell pkg-config --libs libxml-2.0 2>/dev/null))$(XML_LIBS)
CHECK_CFLAGS = $(eval CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null))$(CHECK_CFLAGS)
CHECK_LIBS = $(eval CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null))$(CHECK_LIBS)

# ---- libmicrohttpd (optional): `narwhal run --monitor` serves its page with it (emulator/monitor_http.c,
# -DNARWHAL_HAVE_MHD); a narwhal built without it refuses --monitor with one line saying so.  Asked when the
# Makefile is read: `all` reads it again after `deps` has installed what it could.
HAVE_MHD := $(shell pkg-config --exists libmicrohttpd 2>/dev/null && echo 1)
ifeq ($(HAVE_MHD),1)
MHD_CFLAGS := -DNARWHAL_HAVE_MHD=1 $(shell pkg-config --cflags libmicrohttpd)
MHD_LIBS := $(shell pkg-config --libs libmicrohttpd)
endif

# ---- Open MPI (optional): `mpirun -np N narwhal run` spreads a topology's actors over ranks (emulator/mpi*.c;
# README.md, "Running across hosts").  Found by pkg-config ompi-c, else by mpicc --showme; NO_MPI=1 builds
# without (emulator/mpi_none.c: a narwhal that mpirun starts as several processes then says it has no MPI, and
# check_mpi skips).  Only the backend (mpi_comm.c) and bench-mpi-link include <mpi.h>; narwhal and the tests
# link libmpi, the actors never do.  Give a build without MPI its own BUILD directory.
ifneq ($(NO_MPI),1)
HAVE_MPI := $(shell (pkg-config --exists ompi-c 2>/dev/null || command -v mpicc >/dev/null) && echo 1)
endif
ifeq ($(HAVE_MPI),1)
MPI_CFLAGS := -DNARWHAL_HAVE_MPI=1 $(shell pkg-config --cflags ompi-c 2>/dev/null || mpicc --showme:compile)
MPI_LIBS := $(shell pkg-config --libs ompi-c 2>/dev/null || mpicc --showme:link)
endif

# ---- CUDA: used whenever nvcc is on the PATH (NO_CUDA=1 forces a CPU-only build)
NVCC ?= $(shell command -v nvcc 2>/dev/null)
CUDA_ARCH ?= sm_90
KERNEL_SRCS := $(wildcard kernels/*.cu)
ifeq ($(NO_CUDA),1)
NVCC :=
endif
ifneq ($(NVCC),)
ifneq ($(KERNEL_SRCS),)
HAVE_CUDA := 1
CUDA_HOME ?= $(patsubst %/bin/,%,$(dir $(NVCC)))
BASEFLAGS += -DNARWHAL_HAVE_CUDA=1 -I$(CUDA_HOME)/include
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread -lstdc++
NVFLAGS := -O3 -std=c++17 -arch=$(CUDA_ARCH) -Xcompiler -fPIC,-fvisibility=hidden,-Wall,-Wextra \
	-DNARWHAL_HAVE_CUDA=1 -Iadf -Iactors -Iactors/kit -Idetector -Ikernels
endif
endif
# the kernel objects of a target, given its list of .cu files, with the GPU layer they use (none in a CPU-only build)
cuobj = $(if $(HAVE_CUDA),$(if $(1),$(patsubst %.cu,$(BUILD)/obj/%.o,$(1) kernels/gpu_device.cu)))
# an actor's GPU backend sources (its engine's ops table), compiled only with CUDA
gpu_backend = $(if $(HAVE_CUDA),$(1))

# ---- sources
ADF_SRCS := $(wildcard adf/*.c)
KIT_SRCS := $(wildcard actors/kit/*.c)
DET_SRCS := $(wildcard detector/*.c)
SIM_SRCS := $(wildcard sim/*.c)
ANA_SRCS := $(wildcard analysis/*.c)
EMU_SRCS := $(filter-out emulator/main.c $(if $(HAVE_MPI),emulator/mpi_none.c,emulator/mpi_comm.c),$(wildcard emulator/*.c))
TOOL_SRCS := $(wildcard detector/tools/*.c)
TEST_SRCS := $(wildcard tests/check_*.c)
TEST_ACTOR_SRCS := $(wildcard tests/actors/*.c)
TEST_TOOL_SRCS := $(wildcard tests/tools/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIBADF_A := $(BUILD)/lib/libadf.a
LIBADF_SO := $(BUILD)/lib/libadf.so
LIBKIT := $(BUILD)/lib/libkit.a
LIBDET := $(BUILD)/lib/libdetector.a
LIBSIM := $(BUILD)/lib/libsim.a
LIBANA := $(BUILD)/lib/libanalysis.a
LIBEMU := $(BUILD)/lib/libemu.a
LIBPSA := $(BUILD)/lib/libpsa.a
LIBTRACKER := $(BUILD)/lib/libtracker.a
LIBHISTO := $(BUILD)/lib/libhisto.a
NARWHAL := $(BUILD)/bin/narwhal

# ---- actors: name, its C sources, its CUDA sources and the libraries of ours it needs beyond
# the kit, libdetector and libadf (which every actor gets)
ACTORS := adf_reader adf_writer histo histo_sink tracker builder generator psa
adf_reader_SRCS := actors/io/adf_reader.c
adf_writer_SRCS := actors/io/adf_writer.c actors/io/write_behind.c
# the histogrammer's algorithm, a library; its glue is histo_actor.c with histo_filter.c or histo_sink.c
HISTO_LIB_SRCS := actors/histo/histo_engine.c actors/histo/histo_cpu.c actors/histo/histo_spec.c \
	actors/histo/histo_frames.c actors/histo/histo_block.c actors/histo/histo_output.c actors/histo/histo_plot.c \
	actors/histo/histo_write.c actors/histo/histo_backend_cpu.c \
	$(call gpu_backend,actors/histo/histo_backend_cuda.c)
histo_SRCS := actors/histo/histo_filter.c actors/histo/histo_actor.c actors/histo/histo_live.c
histo_CU := kernels/histogram.cu
histo_LIBS := $(LIBHISTO) $(LIBANA)
histo_sink_SRCS := actors/histo/histo_sink.c actors/histo/histo_actor.c actors/histo/histo_live.c
histo_sink_CU := kernels/histogram.cu
histo_sink_LIBS := $(LIBHISTO) $(LIBANA)
# the tracker's algorithm, a library (actors/tracker/ less its glue, tracker.c)
TRACKER_LIB_SRCS := actors/tracker/tracker_engine.c actors/tracker/tracker_cpu.c \
	actors/tracker/tracker_model.c actors/tracker/tracker_events.c actors/tracker/tracker_truth.c \
	actors/tracker/tracker_output.c actors/tracker/tracker_backend_cpu.c \
	$(call gpu_backend,actors/tracker/tracker_backend_cuda.c)
tracker_SRCS := actors/tracker/tracker.c
tracker_CU := kernels/tracker.cu
tracker_LIBS := $(LIBTRACKER)
builder_SRCS := actors/builder/builder.c actors/builder/builder_core.c
generator_SRCS := actors/sim/generator.c actors/sim/gen_conf.c actors/sim/gen_run.c actors/sim/gammaevents.c
generator_LIBS := $(LIBSIM)
# the PSA's algorithm, a library (actors/psa/ less its glue, psa.c and its configuration table psa_conf.c)
PSA_LIB_SRCS := actors/psa/psa_block.c actors/psa/psa_parts.c actors/psa/psa_event.c actors/psa/psa_pair.c \
	actors/psa/psa_engine.c actors/psa/psa_cpu.c actors/psa/psa_naive.c actors/psa/psa_thesis.c actors/psa/psa_layout.c \
	actors/psa/psa_batch.c actors/psa/psa_pow.c actors/psa/psa_backend_cpu.c \
	$(call gpu_backend,actors/psa/psa_backend_cuda.c actors/psa/psa_block_cuda.c)
psa_SRCS := actors/psa/psa.c actors/psa/psa_conf.c
psa_CU := kernels/gridsearch.cu kernels/psa_block.cu
psa_LIBS := $(LIBPSA)
ACTOR_SOS := $(ACTORS:%=$(BUILD)/actors/%.so)

# ---- tools/: benchmarks, studies and converters: name, C sources, CUDA sources, libraries as for actors
# (libdetector and libadf; not the kit: a tool links an actor's library, never its glue)
PROGRAMS := bench-machine bench-histo sim-validate bench-tracker ge2adf bench-psa adf-split psa-pairs
adf-split_SRCS := tools/adf_split.c
# bench-machine first: make bench prints the machine's limits (tools/bench_limits.c) before the figures judged against them
bench-machine_SRCS := tools/bench_machine.c tools/bench_limits.c
bench-histo_SRCS := tools/bench_histo.c tools/bench_limits.c
bench-histo_LIBS := $(LIBHISTO)
bench-histo_CU := kernels/histogram.cu kernels/histogram_cub.cu
sim-validate_SRCS := tools/sim_validate.c
sim-validate_LIBS := $(LIBSIM)
bench-tracker_SRCS := tools/bench_tracker.c tools/tracker_study.c actors/sim/gammaevents.c tools/bench_limits.c
bench-tracker_CU := kernels/tracker.cu
bench-tracker_LIBS := $(LIBTRACKER) $(LIBSIM)
ge2adf_SRCS := tools/ge2adf.c actors/sim/gammaevents.c
ge2adf_LIBS := $(LIBTRACKER)
bench-psa_SRCS := tools/bench_psa.c tools/bench_limits.c
bench-psa_CU := kernels/gridsearch.cu kernels/psa_block.cu
bench-psa_LIBS := $(LIBPSA)
psa-pairs_SRCS := tools/psa_pairs.c
psa-pairs_LIBS := $(LIBSIM)
PROGRAM_BINS := $(PROGRAMS:%=$(BUILD)/bin/%)
# bench-mpi-link: the links' protocol between two ranks against memcpy (MPI builds only; it starts its own mpirun)
ifeq ($(HAVE_MPI),1)
PROGRAM_BINS += $(BUILD)/bin/bench-mpi-link
endif

TOOLS := $(TOOL_SRCS:detector/tools/%.c=$(BUILD)/bin/%)
TESTS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_ACTORS := $(TEST_ACTOR_SRCS:tests/actors/%.c=$(BUILD)/tests/actors/%.so)
TEST_TOOLS := $(TEST_TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/%)

.PHONY: all deps run check memcheck bench fuzz install clean
.SECONDARY:
all: deps
	@$(MAKE) --no-print-directory build-all
.PHONY: build-all
build-all: $(NARWHAL) $(ACTOR_SOS) $(TOOLS) $(PROGRAM_BINS) $(LIBADF_SO) $(BUILD)/lib/narwhal.pc

# ---- dependencies: libxml2, Check, pkg-config (needed); gnuplot (the spectra's plots), Open MPI (runs across
# hosts), libmicrohttpd (the live monitoring page), chromium (the page's browser test) and clang (libFuzzer):
# wanted, optional.  Installed here when possible.  A machine where an optional one cannot be installed still
# builds without it: the attempt is made once (stamp in $(BUILD)), and what needs it says so or is skipped.
DEPS_PKGS := libxml2-dev check pkg-config
OPT_PKGS := gnuplot-nox libopenmpi-dev openmpi-bin libmicrohttpd-dev chromium clang
opt_present = command -v gnuplot >/dev/null && command -v mpicc >/dev/null && command -v mpirun >/dev/null && \
	pkg-config --exists libmicrohttpd 2>/dev/null && command -v chromium >/dev/null && command -v clang >/dev/null
deps:
	@libs_ok() { pkg-config --exists libxml-2.0 check 2>/dev/null; }; \
	opt_ok() { $(opt_present); }; \
	if libs_ok && { opt_ok || [ -f $(BUILD)/.optional-tried ]; }; then exit 0; fi; \
	if libs_ok; then want="$(OPT_PKGS)"; else want="$(DEPS_PKGS) $(OPT_PKGS)"; fi; \
	echo "narwhal: installing what is missing: $$want"; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=sudo; \
	else SUDO=none; fi; \
	if [ "$$SUDO" != none ] && command -v apt-get >/dev/null; then \
	  for p in $$want; do $$SUDO apt-get install -y $$p >/dev/null 2>&1 || \
	    { $$SUDO apt-get update -qq >/dev/null 2>&1 && $$SUDO apt-get install -y $$p >/dev/null 2>&1; } || \
	    echo "narwhal: could not install $$p" >&2; done; fi; \
	if ! libs_ok; then \
	  echo "narwhal: libxml2 and Check are needed. Run:  sudo apt-get update && sudo apt-get install -y $(DEPS_PKGS) $(OPT_PKGS)" >&2; \
	  exit 1; fi; \
	if ! opt_ok; then mkdir -p $(BUILD); touch $(BUILD)/.optional-tried; \
	  echo "narwhal: not every optional package could be installed ($(OPT_PKGS)): what needs a missing one is built without it or skipped" >&2; fi

# ---- compile rules
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) $(XML_CFLAGS) -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) $(XML_CFLAGS) $(CHECK_CFLAGS) -Itests -c $< -o $@

$(BUILD)/obj/kernels/%.o: kernels/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -MMD -MP -c $< -o $@

$(LIBADF_A): $(call obj,$(ADF_SRCS))
	@mkdir -p $(@D)
	$(AR) rcs $@ $^
$(LIBADF_SO): $(call obj,$(ADF_SRCS))
	@mkdir -p $(@D)
	$(CC) -shared -fvisibility=default $(LDFLAGS_ALL) -o $@ $^
$(LIBKIT): $(call obj,$(KIT_SRCS))
	@mkdir -p $(@D)
	$(AR) rcs $@ $^
$(LIBDET): $(call obj,$(DET_SRCS))
	@mkdir -p $(@D)
	$(AR) rcs $@ $^
$(LIBSIM): $(call obj,$(SIM_SRCS))
	@mkdir -p $(@D)
	$(AR) rcs $@ $^
$(LIBANA): $(call obj,$(ANA_SRCS))
	@mkdir -p $(@D)
	$(AR) rcs $@ $^
# with CUDA the emulator's block buffers are page-locked through the GPU layer (emulator/buffer.c)
$(LIBEMU): $(call obj,$(EMU_SRCS)) $(if $(HAVE_CUDA),$(BUILD)/obj/kernels/gpu_device.o)
	@mkdir -p $(@D)
	@rm -f $@
	$(AR) rcs $@ $^
$(LIBPSA): $(call obj,$(PSA_LIB_SRCS))
	@mkdir -p $(@D)
	$(AR) rcs $@ $^
$(LIBTRACKER): $(call obj,$(TRACKER_LIB_SRCS))
	@mkdir -p $(@D)
	$(AR) rcs $@ $^
$(LIBHISTO): $(call obj,$(HISTO_LIB_SRCS))
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

ALL_LIBS := $(LIBEMU) $(LIBANA) $(LIBSIM) $(LIBKIT) $(LIBDET) $(LIBADF_A)
LINK_LIBS = $(XML_LIBS) $(CUDA_LIBS) -ldl -lm

$(NARWHAL): $(call obj,emulator/main.c) $(LIBEMU) $(LIBANA) $(LIBSIM) $(LIBADF_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -rdynamic -o $@ $^ $(LINK_LIBS) $(MHD_LIBS) $(MPI_LIBS)

$(BUILD)/bin/%: $(BUILD)/obj/detector/tools/%.o $(LIBDET) $(LIBADF_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LINK_LIBS)

define actor_rule
$(BUILD)/actors/$(1).so: $(call obj,$($(1)_SRCS)) $(call cuobj,$($(1)_CU)) $($(1)_LIBS) $(LIBKIT) $(LIBDET) $(LIBADF_A)
	@mkdir -p $$(@D)
	$$(CC) -shared $$(LDFLAGS_ALL) -Wl,--no-undefined -Wl,--exclude-libs,ALL -o $$@ $$^ $$(LINK_LIBS)
endef
$(foreach a,$(ACTORS),$(eval $(call actor_rule,$(a))))

$(BUILD)/bin/bench-mpi-link: $(BUILD)/obj/tools/bench_mpi_link.o $(BUILD)/obj/tools/bench_limits.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(MPI_LIBS) $(CUDA_LIBS) -ldl -lm

define program_rule
$(BUILD)/bin/$(1): $(call obj,$($(1)_SRCS)) $(call cuobj,$($(1)_CU)) $($(1)_LIBS) $(LIBDET) $(LIBADF_A)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_ALL) -o $$@ $$^ $$(LINK_LIBS)
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_rule,$(p))))

$(BUILD)/tests/actors/%.so: $(BUILD)/obj/tests/actors/%.o $(LIBKIT) $(LIBADF_A)
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS_ALL) -Wl,--no-undefined -Wl,--exclude-libs,ALL -o $@ $^ -lm

# the foreign filter stands for a third party's actor: nothing of ours, not even the kit, is linked in
$(BUILD)/tests/actors/foreign_filter.so: $(BUILD)/obj/tests/actors/foreign_filter.o
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS_ALL) -Wl,--no-undefined -o $@ $^

$(BUILD)/tests/check_%: $(BUILD)/obj/tests/check_%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -rdynamic -o $@ $^ $(LINK_LIBS) $(MHD_LIBS) $(MPI_LIBS) $(CHECK_LIBS)

# check_agata_files reads the chain's file back with tests/agata_reader.c, written from AGATA's layouts alone
$(BUILD)/tests/check_agata_files: $(BUILD)/obj/tests/agata_reader.o

# check_gridsearch checks gridsearch_fom.h's bounds on libpsa's |d|^p tables (psa_pow_fit)
$(BUILD)/tests/check_gridsearch: $(BUILD)/obj/tests/check_gridsearch.o $(LIBPSA) $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -rdynamic -o $@ $^ $(LINK_LIBS) $(MHD_LIBS) $(MPI_LIBS) $(CHECK_LIBS)

# check_psa_local calls libpsa's layout and searches (the neighbour passes' local search)
$(BUILD)/tests/check_psa_local: $(BUILD)/obj/tests/check_psa_local.o $(LIBPSA) $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -rdynamic -o $@ $^ $(LINK_LIBS) $(MHD_LIBS) $(MPI_LIBS) $(CHECK_LIBS)

# check_shapes builds the tracker's path model (libtracker, before the libraries it calls)
$(BUILD)/tests/check_shapes: $(BUILD)/obj/tests/check_shapes.o $(LIBTRACKER) $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -rdynamic -o $@ $^ $(LINK_LIBS) $(MHD_LIBS) $(MPI_LIBS) $(CHECK_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/tools/%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LINK_LIBS) $(MPI_LIBS)

# the NARVAL-like host of tests/narval_host/ is written against actors/narval.h alone: libdl and nothing of ours
NARVAL_HOST := $(BUILD)/tests/narval_host
$(NARVAL_HOST): $(call obj,$(wildcard tests/narval_host/*.c))
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $^ -ldl

$(BUILD)/lib/narwhal.pc: Makefile
	@mkdir -p $(@D)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include/narwhal' \
	  'actordir=$${prefix}/lib/narwhal/actors' '' 'Name: narwhal' \
	  'Description: Narwhal ADF frame library and NARVAL actor ABI' 'Version: $(VERSION)' \
	  'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -ladf' 'Cflags: -I$${includedir}' > $@

# ---- the default PSA basis: built once, rebuilt when the geometry or basisgen changes
DEFAULT_BASIS := $(CACHE)/default.basis
$(DEFAULT_BASIS): detector/geometry/agata.geo $(BUILD)/bin/basisgen
	@mkdir -p $(@D)
	@echo "narwhal: building the default basis $@ (once; about 20 s on 2 cores)"
	$(BUILD)/bin/basisgen --quiet --geometry detector/geometry/agata.geo -o $@
.PHONY: basis
basis: all
	@$(MAKE) --no-print-directory $(DEFAULT_BASIS)

# ---- the bases of AGATA's three crystal shapes (detector/geometry/agata_[ABC].geo): on demand, for the
# topologies of AGATA's own array (full_chain_atc.xml: make run)
SHAPE_BASES := $(CACHE)/agata_A.basis $(CACHE)/agata_B.basis $(CACHE)/agata_C.basis
$(CACHE)/agata_%.basis: detector/geometry/agata_%.geo $(BUILD)/bin/basisgen
	@mkdir -p $(@D)
	@echo "narwhal: building the basis of AGATA's shape $* into $@ (once; about 40 s on 2 cores)"
	$(BUILD)/bin/basisgen --quiet --geometry $< -o $@
.PHONY: bases
bases: all
	@$(MAKE) --no-print-directory $(SHAPE_BASES)

# ---- the main job: the whole chain on simulated γ rays, then its summary.  `make run`: AGATA's own array,
# each crystal of its shape A, B or C (topologies/full_chain_atc.xml: a producer and a PSA per shape, each PSA
# its shape's basis, the three bases built once on demand; build/full_chain_atc/).  `make run-regular`: the
# regular hexagon's chain (topologies/full_chain.xml: one producer, one PSA, the default basis; build/full_chain/).
# (only what the chain needs: narwhal, the actors, basisgen and the bases; not the benchmarks nor the CUB comparison)
run: deps
	@$(MAKE) --no-print-directory $(NARWHAL) $(ACTOR_SOS) $(SHAPE_BASES)
	@$(MAKE) --no-print-directory run-chain CHAIN=full_chain_atc
.PHONY: run-regular run-atc
run-regular: deps
	@$(MAKE) --no-print-directory $(NARWHAL) $(ACTOR_SOS) $(DEFAULT_BASIS)
	@$(MAKE) --no-print-directory run-chain CHAIN=full_chain
# the name issue 15 gave the real shapes' chain before it became the default
run-atc: run

# run-chain CHAIN=NAME: topologies/NAME.xml into build/NAME/ (its ADFWriter.conf and Histo.conf write there)
CHAIN ?= full_chain_atc
CHAIN_OUT = build/$(CHAIN)
chain_picture_full_chain := generator -> psa -> builder -> tracker -> histo -> adf_writer
chain_picture_full_chain_atc := gen_agata_A|B|C (a producer per crystal shape) -> psa_agata_A|B|C (each its shape's basis) -> builder -> tracker -> histo -> adf_writer
.PHONY: run-chain
run-chain:
	@mkdir -p $(CHAIN_OUT)
	@set -o pipefail; start=$$(date +%s.%N); \
	echo "narwhal: topologies/$(CHAIN).xml: $(chain_picture_$(CHAIN)) (log: $(CHAIN_OUT)/run.log; the per-actor table ends the summary)"; \
	$(NARWHAL) run topologies/$(CHAIN).xml --pipeline --actors $(BUILD)/actors --report $(CHAIN_OUT)/report.tsv \
	  2>&1 >$(CHAIN_OUT)/run-table.txt | tee $(CHAIN_OUT)/run.log && \
	$(NARWHAL) summary $(CHAIN_OUT)/output.adf --narwhal $(CHAIN_OUT)/output.narwhal.adf --report $(CHAIN_OUT)/report.tsv \
	  --plots $(CHAIN_OUT)/plots --histo $(CHAIN_OUT)/histo | tee $(CHAIN_OUT)/summary.txt && \
	awk -v s=$$start -v e=$$(date +%s.%N) 'BEGIN { t = e - s; printf "narwhal: the chain and its summary took %.0f s: %s\n", t, \
	  t <= 120 ? "within the 2 minutes the main job is given" : "MORE than the 2 minutes the main job is given (a loaded machine?)" }'

.PHONY: run-replay
run-replay: $(BUILD)/tests/mkadf
	@mkdir -p $(CACHE)
	@[ -f $(CACHE)/replay-input.adf ] || $(BUILD)/tests/mkadf $(CACHE)/replay-input.adf 2000
	$(NARWHAL) run topologies/replay.xml --actors $(BUILD)/actors --conf topologies/conf
	@cmp $(CACHE)/replay-input.adf build/replay-output.adf && \
	  echo "narwhal: replay output build/replay-output.adf equals its input byte for byte"

# ---- tests
# the checks that validate the shipped configurations need the default basis they name (actors check
# their files at process_config): built once when missing, as `make run` does.  Under SANITIZE=1 every
# Check timeout is four times as long (the timeouts catch hangs; sanitized code runs several times slower:
# check_sim's pencil-beam test passed 60 s on a 2-core machine)
check: all
	@$(MAKE) --no-print-directory build-tests
	@[ -f $(DEFAULT_BASIS) ] || $(MAKE) --no-print-directory $(DEFAULT_BASIS)
	@BUILD=$(BUILD) $(if $(filter 1,$(SANITIZE)),CK_TIMEOUT_MULTIPLIER=4) tests/run-checks.sh $(TESTS)

.PHONY: build-tests build-tests-now
# After `all`, whose build is a make of its own (after deps): `make -j all build-tests` ran two makes on one tree
# at once, and a link could read an archive the other was writing (device builds in sessions 13 and 17).
build-tests: all
	@$(MAKE) --no-print-directory build-tests-now
build-tests-now: $(NARWHAL) $(ACTOR_SOS) $(TOOLS) $(TESTS) $(TEST_ACTORS) $(TEST_TOOLS) $(NARVAL_HOST)

memcheck: all
	@$(MAKE) --no-print-directory build-tests
	@BUILD=$(BUILD) tests/memcheck.sh

# ---- fuzzing (clang + libFuzzer): one target per tests/fuzz/fuzz_*.c, built by a make of its own in
# build/fuzz/ (clang, ASan + UBSan and the fuzzer's coverage on every object, no CUDA).  A target named after
# an actor (fuzz_psa) links that actor's objects and libraries and calls its process_* entry points
# (tests/fuzz/harness.h); the others link what the tests link (ALL_LIBS).  make fuzz runs each for
# FUZZ_SECONDS, FUZZ_JOBS at a time (tests/fuzz/run.sh: corpora, logs and crashes in build/fuzz/); without a
# clang that has libFuzzer it says so and succeeds.
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_CC ?= clang
FUZZ_DIR := build/fuzz
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
fuzz_actor = $(filter $(patsubst fuzz_%,%,$(1)),$(ACTORS))
fuzz_links = $(if $(call fuzz_actor,$(1)),$(call obj,$($(call fuzz_actor,$(1))_SRCS)) $($(call fuzz_actor,$(1))_LIBS) \
	$(LIBKIT) $(LIBDET) $(LIBADF_A),$(ALL_LIBS))
define fuzz_rule
$(BUILD)/bin/$(1): $(BUILD)/obj/tests/fuzz/$(1).o $(call fuzz_links,$(1))
	@mkdir -p $$(@D)
	$$(CC) -fsanitize=fuzzer $$(LDFLAGS_ALL) -o $$@ $$^ $$(LINK_LIBS)
endef
$(foreach f,$(FUZZ_NAMES),$(eval $(call fuzz_rule,$(f))))
.PHONY: fuzz-build
fuzz-build: $(FUZZ_NAMES:%=$(BUILD)/bin/%)

# the PSA's basis for its target: check_chain's coarse one (6 mm grid), a fraction of a second
$(FUZZ_DIR)/fuzz.basis: $(BUILD)/bin/basisgen detector/geometry/agata.geo
	@mkdir -p $(@D)
	$(BUILD)/bin/basisgen --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o $@

fuzz_usable = printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' | \
	$(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1
fuzz: deps
	@if ! $(fuzz_usable); then echo "narwhal: make fuzz skipped: no $(FUZZ_CC) with libFuzzer here (apt-get install clang)"; \
	  exit 0; fi; \
	$(MAKE) --no-print-directory $(FUZZ_DIR)/fuzz.basis && \
	$(MAKE) --no-print-directory BUILD=$(FUZZ_DIR) CC=$(FUZZ_CC) NO_CUDA=1 NO_MPI=1 OPT=-O1 SANFLAGS='$(FUZZ_SAN)' fuzz-build && \
	tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_NAMES)

# the line coverage of each target's sources by its corpus and seeds (after make fuzz): the targets again,
# instrumented for llvm-cov instead of the sanitizers (build/fuzz-cov), each input run once
.PHONY: fuzz-coverage
fuzz-coverage: deps
	@if ! $(fuzz_usable); then echo "narwhal: make fuzz-coverage skipped: no $(FUZZ_CC) with libFuzzer here"; exit 0; fi; \
	$(MAKE) --no-print-directory BUILD=build/fuzz-cov CC=$(FUZZ_CC) NO_CUDA=1 NO_MPI=1 OPT=-O1 \
	  SANFLAGS='-fsanitize=fuzzer-no-link -fprofile-instr-generate -fcoverage-mapping' fuzz-build && \
	tests/fuzz/coverage.sh build/fuzz-cov $(FUZZ_DIR) $(FUZZ_NAMES)

# ---- fault injection (tests/fault/): libfault.so, preloaded by check_fault into narwhal runs, makes the N-th
# allocation or file write of our code fail (NARWHAL_FAULT=alloc:N / write:N: tests/fault/fault.c).  CUDA calls
# need a build of their own: make FAULT=1 BUILD=build/fault compiles the kernels with kernels/gpu_fault.h's hook
# (NARWHAL_FAULT=cuda:N); the CUB benchmark's source is left out (CUB's headers call the runtime themselves).
FAULT_LIB := $(BUILD)/tests/libfault.so
$(FAULT_LIB): tests/fault/fault.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -fPIC -shared -fvisibility=hidden $(WARN) -o $@ $< -ldl
build-tests-now: $(FAULT_LIB)
ifeq ($(FAULT),1)
ifeq ($(BUILD),build)
$(error FAULT=1 makes a build of its own: give it its folder, e.g. make FAULT=1 BUILD=build/fault)
endif
$(filter-out %/histogram_cub.o,$(KERNEL_SRCS:%.cu=$(BUILD)/obj/%.o)): NVFLAGS += -DNARWHAL_FAULT=1 -include kernels/gpu_fault.h
endif

# ---- benchmarks: every program named bench-* runs in turn
bench: all
	@for b in $(filter $(BUILD)/bin/bench-%,$(PROGRAM_BINS)); do echo "== $$b"; $$b || exit 1; done

# ---- install
PREFIX ?= /usr/local
VERSION := 0.1.0
# `narwhal --version` says the version and what the build has; both objects follow the Makefile's choices
$(BUILD)/obj/emulator/main.o: BASEFLAGS += -DNARWHAL_VERSION='"$(VERSION)"' $(MHD_CFLAGS)
$(BUILD)/obj/emulator/monitor_http.o: BASEFLAGS += $(MHD_CFLAGS)
$(BUILD)/obj/emulator/mpi_comm.o $(BUILD)/obj/tools/bench_mpi_link.o: BASEFLAGS += $(MPI_CFLAGS)
$(BUILD)/obj/emulator/main.o $(BUILD)/obj/emulator/monitor_http.o: Makefile
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/narwhal/actors \
	  $(DESTDIR)$(PREFIX)/include/narwhal $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(NARWHAL) $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(LIBADF_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBADF_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(ACTOR_SOS) $(DESTDIR)$(PREFIX)/lib/narwhal/actors/
	install -m 644 adf/adf.h actors/narval.h $(DESTDIR)$(PREFIX)/include/narwhal/
	$(MAKE) --no-print-directory -B $(BUILD)/lib/narwhal.pc PREFIX=$(PREFIX)
	install -m 644 $(BUILD)/lib/narwhal.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
