# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sib: top-level build.
#
#   make              build the module, the provider and the selftests
#   make check        install what is needed, build, build the packages, boot a VM,
#                     run every selftest; KVER=SERIES (6.12, 7.2) in a guest of
#                     that kernel, with the module and sib_kverbs.ko built for it
#   make check-full   the same with every test, also those the default run leaves
#                     out to fit CI's time (selftests/run_tests --full), no smoke lanes
#   make check-smoke KVER=SERIES
#                     the smoke set (selftests/run_tests --smoke) in a guest of
#                     that kernel; SMOKE_TESTS="sib_link sib_rc" for another list
#   make check-matrix the whole suite on the default kernel, the smoke set on
#                     6.12 and 7.2 (MATRIX_KVERS), each lane's figures at the end;
#                     MATRIX_FULL=1 for the whole suite on each
#   make check-debug  the same under a debug kernel (KASAN, lockdep, kmemleak, UBSAN...)
#                     built once and cached: DEBUG_TESTS="sib_link sib_rc" for a subset,
#                     DEBUG_FLAVOR=kcsan for KCSAN instead of KASAN
#   make run          install what is needed, build, boot a VM and show sib0 at work
#   make lab LAB=lossy|slow
#                     the same, with a lab: a lossy fabric (go-back-N in the
#                     trace and the capture) or a slow receiver (RNR NAKs
#                     against credits); Documentation/labs.md
#   make bench        build, boot a VM and measure sib against rdma_rxe (BENCH_ARGS=--quick)
#   make fuzz         build, boot a VM and run the three fuzzers at full counts (FUZZ_ARGS)
#   make load         build, boot a VM and run the full load test (LOAD_ARGS)
#   make install      install the module and the provider on this machine
#   make deb          build the Debian packages sib-dkms and libsib into .build/deb/
#                     (DEB_DIR), lintian-checked
#   make check-packages  build them, boot a VM, install them there, use sib0, remove them
#                     (KVER=6.12: in a guest of that kernel)
#   make dkms-install    register the module's source with DKMS, build and install
#                     it for every kernel with headers (make dkms-uninstall undoes it)
#   make checkpatch   run the kernel's checkpatch.pl --strict on our C sources
#   make provider-sid, make selftests-sid
#                     the provider and the selftests built inside the sid root
#                     (scripts/sid-root) against its rdma-core, in .build/sid/
#   make provider-trixie, make selftests-trixie
#                     the same in the trixie root (scripts/sid-root --suite
#                     trixie; rdma-core 56), in .build/trixie/
#
# KDIR is the kernel build directory; by default the newest installed one.
# KVER=SERIES (e.g. KVER=6.12) picks the private headers of a Debian kernel
# fetched by scripts/kernel-pkg (scripts/setup --kernel SERIES): make module
# KVER=6.12 builds kernel/rdma_sib.ko for it (Documentation/kernels.md).
# KVER=7.2 (or sid) is Debian sid's kernel: its headers need sid's gcc and
# libc, so the module is built inside the sid root scripts/sid-root made.

SHELL := /bin/bash
TOP := $(CURDIR)

KVER ?= $(shell ls -1 /lib/modules 2>/dev/null | while read v; do \
	  [ -e /lib/modules/$$v/build/Makefile ] && echo $$v; done | sort -V | tail -n1)
ifeq ($(origin KDIR),undefined)
ifeq ($(wildcard /lib/modules/$(KVER)/build/Makefile),)
KPKG_DIR := $(shell $(TOP)/scripts/kernel-pkg --print $(KVER) 2>/dev/null)
ifneq ($(wildcard $(KPKG_DIR)/root/usr),)
# a sid root's kernel (scripts/sid-root): KRUN runs kbuild inside the root
KRUN := $(TOP)/scripts/sid-root --run $(KPKG_DIR) --
KDIR := /usr/src/linux-headers-$(shell cat $(KPKG_DIR)/kernel.release)
KDIR_HOST := $(KPKG_DIR)/root$(KDIR)
else ifneq ($(KPKG_DIR),)
KDIR := $(KPKG_DIR)/build
endif
endif
endif
KDIR ?= /lib/modules/$(KVER)/build
KDIR_HOST ?= $(KDIR)

# Kernel source tarball: kselftest headers and checkpatch.pl come from it,
# extracted at build time into .build/ and never committed.
KSRC_TAR ?= $(lastword $(sort $(wildcard /usr/src/linux-source-*.tar.xz)))
KSRC := $(TOP)/.build/ksrc
KSRC_STAMP := $(KSRC)/.stamp

VM_RUN := $(TOP)/scripts/vm-run

# KVER as a kernel series (6.12, 7.2, sid), which scripts/setup --kernel
# fetches and scripts/vm-run -k boots; empty for an installed kernel
KVER_SERIES := $(shell echo '$(KVER)' | grep -Ex '[0-9]+\.[0-9]+|sid')
# the guest kernel: KVER's when it was given, else vm-run's default (the
# newest installed; KVER's default is computed before scripts/setup runs)
VM_KERNEL = $(if $(filter command line environment,$(origin KVER)),-k $(KVER))

# One guest at a time on a shared machine: check-smoke and check-matrix hold
# VM_LOCK (SIB_VM_LOCK, else /tmp/sib-vm.lock; empty for none) while their
# guests run, as check-debug does. make check holds CHECK_VM_LOCK, none by
# default: on a shared machine run it as flock /tmp/sib-vm.lock make check.
VM_LOCK ?= $(or $(SIB_VM_LOCK),/tmp/sib-vm.lock)
CHECK_VM_LOCK ?=
flock_if = $(if $(1),flock $(1))

# make check's smoke lanes: after the whole suite on KVER, the smoke set on
# each of these kernels (Documentation/testing.md, "Other kernels" has what
# each adds to a run); CHECK_SMOKE_KVERS= for none.
CHECK_SMOKE_KVERS ?= 6.12 7.2
# make check's run_tests arguments on KVER (empty: every program, the long
# tests left out; e.g. --full, --smoke, or sib_link sib_rc)
CHECK_TESTS ?=
# the guest's limit for make check's run on KVER, in seconds
CHECK_TIMEOUT ?= 4500
# what check-smoke runs: selftests/run_tests' arguments (empty: everything)
SMOKE_TESTS ?= --smoke
SMOKE_TIMEOUT ?= 1800
MATRIX_KVERS ?= 6.12 7.2
MATRIX_FULL ?= 0

# The release: the file VERSION is the one place that holds it (the
# module's MODULE_VERSION, DKMS' PACKAGE_VERSION, the packages' version).
VERSION := $(shell cat $(TOP)/VERSION)

DEBUG_FLAVOR ?= kasan
DEBUG_TESTS ?=

.PHONY: all module kverbs provider provider-sid provider-trixie selftests selftests-sid \
	selftests-trixie smbdirect setup check check-full \
	check-smoke check-matrix check-debug soak-debug run lab bench fuzz load install checkpatch clean ksrc \
	dkms-src dkms-install dkms-uninstall deb check-packages

all: module provider selftests

module:
	@test -n "$(KVER)" -a -e "$(KDIR_HOST)/Makefile" || { \
	  echo "error: no kernel build directory (KDIR=$(KDIR)); run scripts/setup" \
	    "(scripts/setup --kernel SERIES for KVER=SERIES)" >&2; exit 1; }
	$(KRUN) $(MAKE) -C $(KDIR) M=$(TOP) modules

# The kernel verbs tests' module (selftests/kverbs/sib_kverbs.ko), run by
# selftests/sib_kverbs; built with the selftests.
kverbs:
	@test -n "$(KVER)" -a -e "$(KDIR_HOST)/Makefile" || { \
	  echo "error: no kernel build directory (KDIR=$(KDIR)); run scripts/setup" \
	    "(scripts/setup --kernel SERIES for KVER=SERIES)" >&2; exit 1; }
	$(KRUN) $(MAKE) -C $(KDIR) M=$(TOP)/selftests/kverbs modules

provider:
	$(MAKE) -C provider

# The provider and the selftests against another Debian suite's rdma-core,
# built inside that suite's newest root (scripts/sid-root --suite SUITE):
# .build/SUITE/provider/libsib-rdmav<PABI>.so and .build/SUITE/selftests/.
# sid: rdma-core 65, private ABI 65; trixie: rdma-core 56, private ABI 34.
# They run inside the root too: scripts/sid-root --run DIR -- ...
# (Documentation/kernels.md, "Debian sid" and "Debian 13 trixie").
ROOT_SUITES := sid trixie
# root_dir SUITE: the newest root of SUITE, or a hint on stderr and failure
root_dir = $(TOP)/scripts/sid-root --suite $(1) --print
# how a new machine makes it
root_setup = scripts/setup $(if $(filter sid,$(1)),--kernel sid,--root $(1))

$(addprefix provider-,$(ROOT_SUITES)): provider-%:
	@dir=$$($(call root_dir,$*)) || { \
	  echo "error: no $* root; run $(call root_setup,$*)" >&2; exit 1; }; \
	set -x; $(TOP)/scripts/sid-root --run $$dir -- \
	  $(MAKE) -C $(TOP)/provider O=$(TOP)/.build/$*/provider

$(addprefix selftests-,$(ROOT_SUITES)): selftests-%: $(KSRC_STAMP)
	@dir=$$($(call root_dir,$*)) || { \
	  echo "error: no $* root; run $(call root_setup,$*)" >&2; exit 1; }; \
	set -x; $(TOP)/scripts/sid-root --run $$dir -- \
	  $(MAKE) -C $(TOP)/selftests KSFT_DIR=$(KSRC)/tools/testing/selftests \
	    OUT=$(TOP)/.build/$*/selftests

$(KSRC_STAMP):
	@test -n "$(KSRC_TAR)" || { \
	  echo "error: /usr/src/linux-source-*.tar.xz not found; run scripts/setup" >&2; exit 1; }
	rm -rf $(KSRC) && mkdir -p $(KSRC)
	tar -xJf $(KSRC_TAR) -C $(KSRC) --strip-components=1 --wildcards \
	  '*/tools/testing/selftests/kselftest.h' \
	  '*/tools/testing/selftests/kselftest_harness.h' \
	  '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
	  '*/scripts/const_structs.checkpatch'
	touch $@

ksrc: $(KSRC_STAMP)

# kernel-doc, which make checkpatch runs too
KERNEL_DOC := $(KSRC)/scripts/kernel-doc
$(KERNEL_DOC): $(KSRC_STAMP)
	tar -xJf $(KSRC_TAR) -C $(KSRC) --strip-components=1 --wildcards \
	  '*/scripts/kernel-doc'
	touch $@

selftests: $(KSRC_STAMP) kverbs smbdirect
	$(MAKE) -C selftests KSFT_DIR=$(KSRC)/tools/testing/selftests

# cifs.ko and ksmbd.ko with SMB Direct, which Debian's kernel lacks, for
# sib_ulp's smb_direct tests: built once per kernel, source and compiler
# (about 3 minutes) and cached outside the clone by scripts/smbdirect-modules;
# .build/smbdirect points at them. With them Debian 13's ksmbd-tools
# (scripts/ksmbd-tools, from trixie's archive; Debian 12's 3.4.7 gets no
# share from this kernel's ksmbd), .build/ksmbd-tools. Off by default (the
# tests then skip): on a fresh machine they add about 5 minutes of builds
# and 4 of guest time to make check, whose guest vm-run stops after an
# hour (Documentation/testing.md, "Kernel consumers"). SMBDIRECT=1 turns
# them on, also for make check.
SMBDIRECT ?= 0

smbdirect:
ifeq ($(SMBDIRECT),1)
	@mkdir -p $(TOP)/.build
	dir=$$($(TOP)/scripts/smbdirect-modules -k $(KVER) | tail -n 1) && test -d "$$dir" && \
	  ln -sfn "$$dir" $(TOP)/.build/smbdirect
	dir=$$($(TOP)/scripts/ksmbd-tools | tail -n 1) && test -d "$$dir" && \
	  ln -sfn "$$dir" $(TOP)/.build/ksmbd-tools
endif

setup:
	$(TOP)/scripts/setup $(if $(KVER_SERIES),--kernel $(KVER_SERIES))

# The whole suite in a guest of KVER, then the smoke lanes of
# CHECK_SMOKE_KVERS; each lane ends with run_tests' "N passed, N failed,
# N skipped" and a "check: KVER: ..." line with its time. A failed lane
# does not stop the next ones; make check fails if any failed, and its
# last line sums the lanes up (a lane that failed without totals counts
# as one failure). The lanes rebuild kernel/rdma_sib.ko and sib_kverbs.ko
# for their kernels: the last one's stay. The output is kept in
# .build/check.log.
CHECK_LOG = $(TOP)/.build/check.log

check: setup
	$(MAKE) all
	$(call flock_if,$(CHECK_VM_LOCK)) $(TOP)/scripts/test-vm-run
	$(MAKE) deb
	@set -o pipefail; rc=0; t=$$SECONDS; lost=0; : > $(CHECK_LOG); \
	echo "$(call flock_if,$(CHECK_VM_LOCK)) $(VM_RUN) $(VM_KERNEL) --no-load -t $(CHECK_TIMEOUT) $(if $(CHECK_MEM),-m $(CHECK_MEM)) -- $(TOP)/selftests/run_tests $(CHECK_TESTS)"; \
	$(call flock_if,$(CHECK_VM_LOCK)) $(VM_RUN) $(VM_KERNEL) --no-load -t $(CHECK_TIMEOUT) \
	  $(if $(CHECK_MEM),-m $(CHECK_MEM)) -- \
	  $(TOP)/selftests/run_tests $(CHECK_TESTS) 2>&1 | tee -a $(CHECK_LOG) || rc=$$?; \
	echo "check: $(or $(KVER),default kernel): $(if $(CHECK_TESTS),run_tests $(CHECK_TESTS),the default suite), exit $$rc, $$((SECONDS - t)) s" | tee -a $(CHECK_LOG); \
	for k in $(CHECK_SMOKE_KVERS); do \
	  t=$$SECONDS; s=0; n=$$(grep -cE '$(TOTALS_RE)' $(CHECK_LOG)); \
	  $(MAKE) --no-print-directory check-smoke KVER=$$k VM_LOCK=$(CHECK_VM_LOCK) 2>&1 | \
	    tee -a $(CHECK_LOG) || s=$$?; \
	  echo "check: $$k: $(if $(SMOKE_TESTS),run_tests $(SMOKE_TESTS),the whole suite), exit $$s," \
	    "$$((SECONDS - t)) s with setup and builds" | tee -a $(CHECK_LOG); \
	  [ $$s -eq 0 ] || rc=$$s; \
	  [ $$s -eq 0 ] || [ $$(grep -cE '$(TOTALS_RE)' $(CHECK_LOG)) -gt $$n ] || lost=$$((lost + 1)); \
	done; \
	grep -E '$(TOTALS_RE)' $(CHECK_LOG) | \
	  awk -v lost=$$lost -v rc=$$rc '{ p += $$1; f += $$3; s += $$5; n++ } \
	    END { f += lost; if (rc && !f) f = 1; \
	      printf "%d passed, %d failed, %d skipped\n", p, f, s }'; \
	exit $$rc

TOTALS_RE := ^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$$

# The smoke set (selftests/run_tests --smoke: load, link add on lo and veth,
# ibv_rc_pingpong, ib_write_bw, rdma-core's python core modules, rping,
# unload) in a guest of KVER, with rdma_sib.ko and sib_kverbs.ko built for
# it. SMOKE_TESTS replaces the list (SMOKE_TESTS= for the whole suite, with
# make check's CHECK_TIMEOUT). The guest gets copies of the two modules, in
# .build/smoke-KVER/, so that the tree can be built for another kernel
# while this one waits for VM_LOCK.
SMOKE_DIR = $(TOP)/.build/smoke-$(KVER)

# Every test, the long ones too, on KVER (about an hour on 6.1), in a
# 4 GiB guest (sib_ulp's nfs_large exports a 1 GiB tmpfs)
check-full:
	$(MAKE) check CHECK_TESTS=--full CHECK_TIMEOUT=10800 CHECK_MEM=4G CHECK_SMOKE_KVERS=

check-smoke: setup
	$(MAKE) all
	mkdir -p $(SMOKE_DIR)
	cp kernel/rdma_sib.ko selftests/kverbs/sib_kverbs.ko $(SMOKE_DIR)/
	$(call flock_if,$(VM_LOCK)) $(VM_RUN) $(VM_KERNEL) --no-load --module $(SMOKE_DIR)/rdma_sib.ko \
	  -e SIB_KVERBS_KO=$(SMOKE_DIR)/sib_kverbs.ko -t $(if $(SMOKE_TESTS),$(SMOKE_TIMEOUT),$(CHECK_TIMEOUT)) -- \
	  $(TOP)/selftests/run_tests $(SMOKE_TESTS)

# make check on the default kernel with smoke lanes on MATRIX_KVERS
# (MATRIX_FULL=1: the whole suite on each), its guests under VM_LOCK; the
# output goes to .build/check-matrix.log too, and each lane's closing
# lines are repeated at the end.
check-matrix:
	@mkdir -p $(TOP)/.build
	@set -o pipefail; rc=0; \
	$(MAKE) --no-print-directory check CHECK_VM_LOCK=$(VM_LOCK) \
	  CHECK_SMOKE_KVERS="$(MATRIX_KVERS)" $(if $(filter 1,$(MATRIX_FULL)),SMOKE_TESTS=) 2>&1 | \
	  tee $(TOP)/.build/check-matrix.log || rc=$$?; \
	echo "check-matrix: the lanes (log: .build/check-matrix.log):"; \
	grep -E '^check: |^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$$' \
	  $(TOP)/.build/check-matrix.log | sed 's/^/  /'; \
	exit $$rc

# The debug kernel is built once per (tarball, config, recipe) and cached
# outside the clone (scripts/debug-kernel); the module is built against it
# in .build/debug-module-$(DEBUG_FLAVOR)/, not in kernel/.
check-debug:
	$(TOP)/scripts/setup --debug
	$(MAKE) provider selftests
	$(TOP)/scripts/check-debug --flavor $(DEBUG_FLAVOR) $(DEBUG_TESTS)

# The 30-minute soak (sib_load --soak) under the debug kernel; memory and
# object counts must come back, and the runner fails on any report.
SOAK_DEBUG_ARGS ?= --soak 1800

soak-debug:
	$(TOP)/scripts/setup --debug
	$(MAKE) provider selftests
	$(TOP)/scripts/check-debug --flavor $(DEBUG_FLAVOR) --load "$(SOAK_DEBUG_ARGS)"

run: setup
	$(MAKE) all
	$(VM_RUN) -- $(TOP)/scripts/demo

# A lab (scripts/lab, Documentation/labs.md) in a guest of the default
# kernel (KVER=SERIES for another), under VM_LOCK as check-smoke's guests.
LAB ?=

lab:
	@case "$(LAB)" in lossy|slow) ;; *) \
	  echo "usage: make lab LAB=lossy|slow (Documentation/labs.md)" >&2; exit 2;; esac
	$(MAKE) setup
	$(MAKE) all
	$(call flock_if,$(VM_LOCK)) $(TOP)/scripts/lab $(VM_KERNEL) $(LAB)

bench: setup
	$(MAKE) all
	$(TOP)/scripts/bench $(BENCH_ARGS)

# The wire, ring and uverbs fuzzers in one VM boot, each at its full count
# (10^6 packets, 10^5 WQEs, 2*10^4 commands); e.g. FUZZ_ARGS="--seed 42"
# or FUZZ_ARGS="--count 100000". A failure prints the command that repeats it.
FUZZ_ARGS ?=
FUZZ_TIMEOUT ?= 5400

fuzz: setup
	$(MAKE) all
	$(VM_RUN) --no-load --pipe -t $(FUZZ_TIMEOUT) -- \
	  $(TOP)/.build/selftests/sib_fuzz all $(FUZZ_ARGS)

# The full load (Documentation/testing.md, "Load"): one VM boot with 3 GiB
# for 4096 QP pairs' buffers. The 30-minute soak: LOAD_ARGS="--soak 1800".
LOAD_ARGS ?= --sweep 1,16,256,1024,4096 --time 60 --mrs 100000
LOAD_VM_ARGS ?= --no-load --pipe -m 3G --timeout 7200

load: setup
	$(MAKE) all
	$(VM_RUN) $(LOAD_VM_ARGS) -- $(TOP)/.build/selftests/sib_load $(LOAD_ARGS)

install: module provider
	$(MAKE) -C $(KDIR) M=$(TOP) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KVER)
	$(MAKE) -C provider install

# DKMS. dkms-src installs the module's source as DKMS builds it, into
# $(DESTDIR)/usr/src/sib-$(VERSION)/: the sib-dkms package is made of it
# (packaging/debian/rules), and dkms-install registers it with DKMS on
# distributions without that package.
DKMS_SRC := Kbuild VERSION uapi/rdma_user_sib.h kernel/Kbuild \
	$(sort $(filter-out %.mod.c,$(wildcard kernel/*.[ch]))) \
	kernel/compat/compat.mk $(sort $(wildcard kernel/compat/*.c))
DKMS_DIR = $(DESTDIR)/usr/src/sib-$(VERSION)

dkms-src:
	@test -n "$(VERSION)" || { echo "error: VERSION is empty" >&2; exit 1; }
	@echo "  INSTALL $(DKMS_DIR)/ ($(words $(DKMS_SRC)) files and dkms.conf)"
	@for f in $(DKMS_SRC); do install -D -m 0644 $$f $(DKMS_DIR)/$$f || exit 1; done
	@sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf >$(DKMS_DIR)/dkms.conf

# For every kernel in /lib/modules with a build directory (DKMS_KERNELS
# to choose): add, build, install. Refused while the sib-dkms package
# owns /usr/src/sib-$(VERSION).
DKMS_KERNELS ?= $(shell for d in /lib/modules/*/build; do \
	  [ -e $$d/Makefile ] && basename $$(dirname $$d); done)

dkms-install:
	@! dpkg-query -W -f='$${db:Status-Abbrev}' sib-dkms 2>/dev/null | grep -q '^i' || { \
	  echo "error: the sib-dkms package is installed; remove it first (dpkg -r sib-dkms)" >&2; exit 1; }
	@test -n "$(DKMS_KERNELS)" || { \
	  echo "error: no /lib/modules/*/build: install the kernel's headers" >&2; exit 1; }
	if dkms status -m sib -v $(VERSION) | grep -q .; then dkms remove -m sib -v $(VERSION) --all; fi
	rm -rf /usr/src/sib-$(VERSION)
	$(MAKE) --no-print-directory dkms-src DESTDIR=
	dkms add -m sib -v $(VERSION)
	for k in $(DKMS_KERNELS); do \
	  dkms build -m sib -v $(VERSION) -k $$k && dkms install -m sib -v $(VERSION) -k $$k || exit 1; \
	done

dkms-uninstall:
	@! dpkg-query -W -f='$${db:Status-Abbrev}' sib-dkms 2>/dev/null | grep -q '^i' || { \
	  echo "error: the sib-dkms package is installed; remove it with dpkg -r sib-dkms" >&2; exit 1; }
	if dkms status -m sib -v $(VERSION) | grep -q .; then dkms remove -m sib -v $(VERSION) --all; fi
	rm -rf /usr/src/sib-$(VERSION)

# Debian packages (scripts/build-debs): the source package and sib-dkms,
# libsib, in DEB_DIR, then lintian on them.
DEB_DIR ?= $(TOP)/.build/deb

deb:
	$(TOP)/scripts/build-debs -o $(DEB_DIR)

# The packages in a VM, without the build tree's module or provider:
# dpkg -i, DKMS builds rdma_sib.ko there, sib0 carries ibv_rc_pingpong,
# dpkg -r leaves nothing behind; then, in a second VM, the same with make
# dkms-install and dkms-uninstall (scripts/test-packages). 6 to 9 minutes
# each under TCG: too long for make check, which builds and lints the
# packages (make deb) but does not install them.
# KVER=6.12 does it in a guest of that kernel, whose headers test-packages
# installs there first from the packages scripts/kernel-pkg downloaded. Not
# for sid's kernel: its headers need sid's gcc and libc, which a Debian 12
# guest has not (Documentation/install.md).
check-packages: setup deb
	@kdebs=(); \
	if [ -n "$(KVER_SERIES)" ]; then \
	  d=$$($(TOP)/scripts/kernel-pkg --print $(KVER_SERIES)) && test -d "$$d/debs" || { \
	    echo "error: no kernel packages of $(KVER) to install in a Debian 12 guest" \
	      "(sid's kernel builds in its sid root only)" >&2; exit 1; }; \
	  kdebs=(--kernel-debs "$$d/debs"); \
	fi; \
	set -x; \
	$(call flock_if,$(CHECK_VM_LOCK)) $(VM_RUN) $(VM_KERNEL) --no-module --no-provider -t 900 -- \
	  $(TOP)/scripts/test-packages "$${kdebs[@]}" $(DEB_DIR) && \
	$(call flock_if,$(CHECK_VM_LOCK)) $(VM_RUN) $(VM_KERNEL) --no-module --no-provider -t 900 -- \
	  $(TOP)/scripts/test-packages "$${kdebs[@]}" --tree $(TOP)

# Kernel code and the uapi header must be clean under --strict. The
# provider is user space (rdma-core's style): the rules
# about kernel-only types and attribute macros do not apply to it.
CHECKPATCH = $(KSRC)/scripts/checkpatch.pl --strict --no-tree --terse --show-types
USER_IGNORE := PREFER_KERNEL_TYPES,PREFER_DEFINED_ATTRIBUTE_MACRO,CAMELCASE
USER_IGNORE := $(USER_IGNORE),SPDX_LICENSE_TAG,USE_NEGATIVE_ERRNO,MACRO_ARG_REUSE
USER_IGNORE := $(USER_IGNORE),OPEN_ENDED_LINE,MACRO_ARG_PRECEDENCE

# The selftests' shared topology helper is user space too, and splits its
# shell commands across lines where the shell reads them.
# The TRACE_EVENT() layout and its symbol lists (kernel/sib_trace.h,
# kernel/sib_trace_syms.h) are what checkpatch cannot parse; those types
# only, in those files only.
TRACE_IGNORE := COMPLEX_MACRO,TRAILING_SEMICOLON,MACRO_ARG_REUSE,OPEN_ENDED_LINE
TRACE_IGNORE := $(TRACE_IGNORE),PARENTHESIS_ALIGNMENT

checkpatch: $(KSRC_STAMP) $(KERNEL_DOC)
	$(KERNEL_DOC) -none -Werror $(filter-out %.mod.c,$(wildcard kernel/*.[ch])) \
		uapi/*.h selftests/kverbs/sib_kverbs.c selftests/kverbs/sib_dmabuf_exp.c
	$(CHECKPATCH) -f $(filter-out %.mod.c kernel/sib_trace.h kernel/sib_trace_syms.h,$(wildcard kernel/*.[ch])) \
		kernel/compat/*.c uapi/*.h
	$(CHECKPATCH) --ignore $(TRACE_IGNORE) -f kernel/sib_trace.h kernel/sib_trace_syms.h
	$(CHECKPATCH) -f selftests/kverbs/sib_kverbs.c selftests/kverbs/sib_dmabuf_exp.[ch]
	$(CHECKPATCH) --ignore $(USER_IGNORE) -f provider/*.[ch]
	$(CHECKPATCH) --ignore $(USER_IGNORE),SPLIT_STRING -f selftests/sib_topo.[ch]

clean:
	-$(KRUN) $(MAKE) -C $(KDIR) M=$(TOP) clean
	-$(KRUN) $(MAKE) -C $(KDIR) M=$(TOP)/selftests/kverbs clean
	-$(MAKE) -C provider clean
	-$(MAKE) -C selftests clean
	rm -rf .build
