package org.scaledl.workload;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import org.scaledl.Checks;

/**
 * A device described by its figures: a GPU by its data sheet, or a CPU machine by what its description says
 * ({@link #cpu}). GPU models use ratios of work to these figures (FLOPs / peak, bytes / bandwidth, thread blocks /
 * compute units), so a model fitted on some GPUs can predict another one from its description alone; CPU machines are
 * told apart by name, and their figures are recorded where known (0 where not).
 *
 * <pre>{@code
 * Device a100 = new Device("NVIDIA A100-PCIE-40GB", 40, 1555, 108, 1410, 19492, 19492, 40);
 * double ridge = a100.ridgeFlopsPerByte(true);   // FLOPs per byte where matrix kernels turn compute-bound
 * Device vm = Device.cpu("Intel Xeon 2-core VM", 2, 512, 4, 0, 0);
 * }</pre>
 *
 * @param name                device name (as reported by the framework, e.g. {@code torch.cuda.get_device_name()})
 * @param memoryGB            device memory as the data sheet gives it (80 for an 80 GB part); the memory checks
 *                            compare it with predicted GiB, which suits HBM parts, whose marketed capacity is about
 *                            what the framework reports in GiB (an H100 80GB reports 79.6 GiB)
 * @param memoryBandwidthGBps peak memory bandwidth, GB/s
 * @param computeUnits        streaming multiprocessors (NVIDIA) or compute units (AMD)
 * @param clockMHz            boost clock, MHz
 * @param peakMatrixGflops    FP32 peak for dense contractions (matrix cores where the vendor uses them for FP32), GFLOP/s
 * @param peakVectorGflops    FP32 peak of the vector units, GFLOP/s
 * @param l2MB                last-level on-chip cache, MB
 * @param linkGBps            device-to-device link bandwidth per direction (NVLink, Infinity Fabric), GB/s; 0 when
 *                            not described (see {@link #link()})
 * @param kind                a GPU or a CPU machine
 * @param simdBits            widest vector unit of a CPU (256 for AVX2, 512 for AVX-512), 0 when unknown or a GPU
 * @param matrixPeaks         dense peaks of the matrix units per precision (TF32, FP16, BF16, FP8, FP4...), GFLOP/s; 0 where
 *                            the device has none ({@link MatrixPeaks#NONE} for devices described before they existed)
 * @param formFactor          SXM2, SXM4, SXM5, OAM, PCIe... ({@code ""} when not described)
 * @param pcieGBps            the host link's bandwidth per direction (PCIe x16 of the device's generation), GB/s; 0
 *                            when not described
 * @param platform            the system the GPU is normally built into ({@link Platform#NONE} when not described)
 * @param sfuPerClock         exponentials (and other transcendentals) the special-function units of one compute
 *                            unit finish per clock, 0 when not described ({@link #exponentialsPerSecond()} then
 *                            takes {@link #DEFAULT_SFU_PER_CLOCK})
 * @param boardPowerW         the board's power limit (TDP), W, 0 when not described
 * @param architecture        the vendor's name of the chip's generation as the catalog gives it ({@code "Hopper"},
 *                            {@code "Ampere"}, ...), {@code ""} when not described: it tells which GPUs load their
 *                            matrix operands through a tensor memory accelerator ({@link #tensorMemoryAccelerator()})
 */
public record Device(String name, double memoryGB, double memoryBandwidthGBps, int computeUnits, double clockMHz,
        double peakMatrixGflops, double peakVectorGflops, double l2MB, double linkGBps, Kind kind, int simdBits,
        MatrixPeaks matrixPeaks, String formFactor, double pcieGBps, Platform platform, double sfuPerClock,
        double boardPowerW, String architecture) {

    /**
     * Exponentials per compute unit and clock where a description gives none: 16, the rate of every NVIDIA
     * generation from Maxwell to Blackwell (the CUDA C++ Programming Guide's table of arithmetic instruction
     * throughput: base-2 exponential, 16 results per clock per multiprocessor); Blackwell Ultra doubles it.
     */
    public static final double DEFAULT_SFU_PER_CLOCK = 16;

    /**
     * The dense peaks of a device's matrix units per precision, from its data sheet (no sparsity), GFLOP/s (INT8:
     * GOP/s), keyed by the catalog's column prefix ({@code tf32}, {@code fp16}, {@code bf16}, {@code int8},
     * {@code fp8}, {@code mxfp8}, {@code fp4}, ...: {@link Precision#peakColumn()}); a precision without an entry has
     * no such units.
     *
     * @param byColumn peak per column prefix, each finite and positive
     */
    public record MatrixPeaks(java.util.SortedMap<String, Double> byColumn) {
        /** No matrix units described. */
        public static final MatrixPeaks NONE = new MatrixPeaks(new java.util.TreeMap<>());

        /** Validates and copies; zero peaks are dropped (no such units). */
        public MatrixPeaks {
            java.util.TreeMap<String, Double> copy = new java.util.TreeMap<>();
            java.util.Objects.requireNonNull(byColumn, "byColumn").forEach((k, v) -> {
                Checks.argument(k != null && !k.isBlank(), "matrix peak without a precision");
                Checks.argument(v != null && Double.isFinite(v) && v >= 0, "matrix peak %s must be finite and >= 0: %s",
                        k, v);
                if (v > 0) {
                    copy.put(k, v);
                }
            });
            byColumn = java.util.Collections.unmodifiableSortedMap(copy);
        }

        /** Peaks from alternating column prefixes and values, GFLOP/s: {@code of("fp16", 312e3, "bf16", 312e3)}. */
        public static MatrixPeaks of(Object... prefixAndGflops) {
            Checks.argument(java.util.Objects.requireNonNull(prefixAndGflops, "prefixAndGflops").length % 2 == 0,
                    "pairs of prefix and peak");
            java.util.TreeMap<String, Double> m = new java.util.TreeMap<>();
            for (int i = 0; i < prefixAndGflops.length; i += 2) {
                Checks.argument(prefixAndGflops[i] instanceof String && prefixAndGflops[i + 1] instanceof Number,
                        "matrix peaks are pairs of a column prefix (a String) and GFLOP/s (a Number): %s, %s",
                        prefixAndGflops[i], prefixAndGflops[i + 1]);
                m.put((String) prefixAndGflops[i], ((Number) prefixAndGflops[i + 1]).doubleValue());
            }
            return new MatrixPeaks(m);
        }

        /** The peak of a column prefix, GFLOP/s; 0 when the device has no such units. */
        public double get(String column) {
            return byColumn.getOrDefault(column, 0.0);
        }

        // written out for start-up, as Device's
        @Override
        public boolean equals(Object o) {
            return o instanceof MatrixPeaks m && byColumn.equals(m.byColumn);
        }

        @Override
        public int hashCode() {
            return byColumn.hashCode();
        }
    }

    /**
     * The system a GPU is normally built into, from the catalog: what its GPU-to-GPU link is, how many GPUs a node
     * (or tray) holds, how many GPUs one NVLink domain joins, and the scale-out network each GPU has.
     *
     * @param linkKind          the GPU-to-GPU fabric ({@code NVLink4}, {@code NVLink5}, {@code InfinityFabric},
     *                          {@code none} for PCIe only; {@code ""} when not described)
     * @param gpusPerNode       GPUs in the standard server or tray (0: not described)
     * @param nvlinkDomain      GPUs in one NVLink (or Infinity Fabric) domain (0: not described; 72 for NVL72 racks)
     * @param networkGbpsPerGpu scale-out network per GPU, one direction, Gb/s (0: not described)
     */
    public record Platform(String linkKind, int gpusPerNode, int nvlinkDomain, double networkGbpsPerGpu) {
        /** The link kinds described: NVLink of a generation, Infinity Fabric, none (PCIe only), or not described. */
        private static final java.util.regex.Pattern LINK_KINDS = java.util.regex.Pattern.compile(
                "(?i)|none|nvlink[1-9][0-9]?|infinityfabric[0-9]*");
        /** Nothing described. */
        public static final Platform NONE = new Platform("", 0, 0, 0);

        /**
         * Validates.
         *
         * @throws IllegalArgumentException for a link kind that is none of {@code NVLink<generation>}
         *         ({@code NVLink4}), {@code InfinityFabric}, {@code none} or empty (an unknown kind was priced as an
         *         NVLink without a switch), or sizes out of range
         */
        public Platform {
            Objects.requireNonNull(linkKind, "linkKind");
            Checks.argument(LINK_KINDS.matcher(linkKind).matches(), "link kind must be NVLink with its generation "
                    + "(NVLink4: H100, NVLink5: B200), InfinityFabric, or none (PCIe only), got '%s'",
                    org.scaledl.InvalidInputException.printable(linkKind, 40));
            Checks.argument(gpusPerNode >= 0 && gpusPerNode <= 1 << 16 && nvlinkDomain >= 0
                    && nvlinkDomain <= 1 << 20, "GPUs per node (%s) and NVLink domain (%s) out of range", gpusPerNode,
                    nvlinkDomain);
            Checks.argument(Double.isFinite(networkGbpsPerGpu) && networkGbpsPerGpu >= 0
                    && networkGbpsPerGpu <= 1e5, "network per GPU must be in [0, 1e5] Gb/s: %s", networkGbpsPerGpu);
        }

        // written out for start-up, as Device's
        @Override
        public boolean equals(Object o) {
            return o instanceof Platform p && linkKind.equals(p.linkKind) && gpusPerNode == p.gpusPerNode
                    && nvlinkDomain == p.nvlinkDomain && Double.compare(networkGbpsPerGpu, p.networkGbpsPerGpu) == 0;
        }

        @Override
        public int hashCode() {
            return ((linkKind.hashCode() * 31 + gpusPerNode) * 31 + nvlinkDomain) * 31
                    + Double.hashCode(networkGbpsPerGpu);
        }
    }

    /** What a device is. */
    public enum Kind {
        /** An accelerator described by its data sheet. */
        GPU,
        /** A CPU machine (cores, vector width, caches, clock and bandwidth where known). */
        CPU
    }

    /** The least and the most a device's figure may be in its unit (GB, GB/s, MHz, GFLOP/s, MB): beyond any device. */
    public static final double FIGURE_MIN = 1e-6;
    /** See {@link #FIGURE_MIN}. */
    public static final double FIGURE_MAX = 1e12;

    /**
     * Validates: for a GPU every figure finite and positive ({@code linkGBps} may be 0); for a CPU the cores
     * positive and every other figure finite and non-negative (0 = not known); every figure given (not 0) within
     * {@link #FIGURE_MIN}..{@link #FIGURE_MAX} of its unit.
     */
    public Device {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Checks.argument(!name.isBlank(), "device name is blank");
        Checks.argument(Double.isFinite(linkGBps) && linkGBps >= 0,
                "device %s: link bandwidth must be finite and >= 0", name);
        for (double v : new double[] {memoryGB, memoryBandwidthGBps, clockMHz, peakMatrixGflops, peakVectorGflops,
                l2MB}) {
            Checks.argument(Double.isFinite(v) && (kind == Kind.CPU ? v >= 0 : v > 0),
                    "device %s: figures must be finite and %s", name, kind == Kind.CPU ? "non-negative" : "positive");
        }
        // (a figure of 1e-300 or 1e300 divided or multiplied deep inside a prediction into an overflow that named
        // the prediction's terms, not the figure)
        for (double v : new double[] {memoryGB, memoryBandwidthGBps, clockMHz, peakMatrixGflops, peakVectorGflops,
                l2MB, linkGBps, pcieGBps}) {
            Checks.argument(v == 0 || v >= FIGURE_MIN && v <= FIGURE_MAX, "device %s: a figure of %s is beyond any "
                    + "device (its figures lie within %s..%s in their units: GB, GB/s, MHz, GFLOP/s, MB; 0 where not "
                    + "known)", name, v, FIGURE_MIN, FIGURE_MAX);
        }
        Checks.argument(computeUnits > 0, "device %s: compute units must be positive", name);
        Checks.argument(simdBits >= 0, "device %s: SIMD width must be >= 0", name);
        Objects.requireNonNull(matrixPeaks, "matrixPeaks");
        Objects.requireNonNull(formFactor, "formFactor");
        Checks.argument(Double.isFinite(pcieGBps) && pcieGBps >= 0, "device %s: PCIe bandwidth must be >= 0", name);
        Objects.requireNonNull(platform, "platform");
        Checks.argument(Double.isFinite(sfuPerClock) && sfuPerClock >= 0,
                "device %s: special-function rate must be finite and >= 0", name);
        Checks.argument(Double.isFinite(boardPowerW) && boardPowerW >= 0,
                "device %s: board power must be finite and >= 0", name);
        Objects.requireNonNull(architecture, "architecture");
    }

    /** A device without a described architecture. */
    public Device(String name, double memoryGB, double memoryBandwidthGBps, int computeUnits, double clockMHz,
            double peakMatrixGflops, double peakVectorGflops, double l2MB, double linkGBps, Kind kind, int simdBits,
            MatrixPeaks matrixPeaks, String formFactor, double pcieGBps, Platform platform, double sfuPerClock,
            double boardPowerW) {
        this(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops, peakVectorGflops, l2MB,
                linkGBps, kind, simdBits, matrixPeaks, formFactor, pcieGBps, platform, sfuPerClock, boardPowerW, "");
    }

    /**
     * Whether the GPU is half of a superchip (its catalog form factor {@code Superchip}: Grace Blackwell GB200, GB300),
     * whose host CPU reaches it over a coherent NVLink-C2C link rather than PCIe: the host's share of a mixture of
     * experts' layer step is fitted apart on such systems ({@link org.scaledl.model.exec.ExecutionTerm}). Read as
     * {@link #formFactorIs} reads it; false where the form factor is not described.
     */
    public boolean superchip() {
        return kind == Kind.GPU && formFactorIs("Superchip");
    }

    /**
     * Whether the GPU is a PCIe card (its catalog form factor {@code PCIe}, {@code PCIe 5.0}...): Blackwell's PCIe
     * cards (GeForce RTX 50, RTX PRO 6000) are compute capability 12, not the data-centre parts' 10. Read without
     * regard to case or punctuation ({@code PCI-E}, {@code PCI Express}); false where the form factor is not
     * described.
     */
    public boolean pcieCard() {
        return kind == Kind.GPU && formFactorIs("PCIe");
    }

    /**
     * Whether the described form factor is {@code kind} (letters and digits: one with others matches none) or a
     * variant of it, its own letters and digits read without regard to case ({@code "PCIe"} holds for {@code PCI-E}, {@code PCI Express},
     * {@code PCIe 5.0}; {@code "SXM"} for {@code SXM5}; {@code "Superchip"} for {@code Superchip NVL72}); false where
     * none is described.
     */
    public boolean formFactorIs(String kind) {
        Checks.argument(!java.util.Objects.requireNonNull(kind, "kind").isEmpty(), "a form factor's kind is empty");
        // the form factor's letters and digits, walked against the kind's (no pattern: asked layer by layer)
        int k = 0;
        for (int i = 0; i < formFactor.length() && k < kind.length(); i++) {
            char c = formFactor.charAt(i);
            if (Character.isLetterOrDigit(c) && Character.toUpperCase(c) != Character.toUpperCase(kind.charAt(k++))) {
                return false;
            }
        }
        return k == kind.length();
    }

    /**
     * Whether the GPU's matrix kernels load their operands through a tensor memory accelerator (TMA: NVIDIA Hopper,
     * Blackwell and Rubin, compute capability 9.0 and above), whose copies need every row of an operand to start on a
     * 16-byte boundary; a product whose sides break it runs on the previous generation's kernels
     * ({@link org.scaledl.workload.TensorCoreAlignment}). The architecture is read without regard to case or
     * surrounding blanks ({@code "hopper"}, {@code " Blackwell Ultra"}); false where it is not described.
     */
    public boolean tensorMemoryAccelerator() {
        return kind == Kind.GPU && (architectureIs("Hopper") || architectureIs("Blackwell") || architectureIs("Rubin"));
    }

    /**
     * Whether the GPU's FP8 matrix products take their operands in either layout (NVIDIA compute capability 10.x,
     * 11.x and 13 on: Blackwell's data-centre parts, its SXM boards and superchips, and Rubin), so that a tensor
     * scaled per tensor serves the forward and the backward products from one copy; Hopper and the PCIe Blackwell
     * cards (12.x) take only the TN layout, and Transformer Engine keeps a transposed copy beside each FP8 tensor
     * there ({@code is_non_tn_fp8_gemm_supported}). A Blackwell part whose form factor is not described is taken
     * for a data-centre one; false where the architecture is not described.
     */
    public boolean fp8EitherLayout() {
        return kind == Kind.GPU && (architectureIs("Blackwell") && !pcieCard() || architectureIs("Rubin"));
    }

    /**
     * Whether the described architecture is this generation or a variant of it ({@code "Blackwell"} holds for
     * {@code "Blackwell Ultra"}), read without regard to case or surrounding blanks; false where none is described.
     */
    public boolean architectureIs(String generation) {
        java.util.Objects.requireNonNull(generation, "generation");
        String a = architecture.strip();
        return !generation.isEmpty() && a.regionMatches(true, 0, generation, 0, generation.length());
    }



    // written out: a record's generated equals and hashCode are linked through method handles on first use, which
    // costs a cold JVM milliseconds per record class (the start-up of one prediction); RecordEqualityTest checks them
    @Override
    public boolean equals(Object o) {
        return o instanceof Device d && name.equals(d.name) && Double.compare(memoryGB, d.memoryGB) == 0
                && Double.compare(memoryBandwidthGBps, d.memoryBandwidthGBps) == 0 && computeUnits == d.computeUnits
                && Double.compare(clockMHz, d.clockMHz) == 0
                && Double.compare(peakMatrixGflops, d.peakMatrixGflops) == 0
                && Double.compare(peakVectorGflops, d.peakVectorGflops) == 0 && Double.compare(l2MB, d.l2MB) == 0
                && Double.compare(linkGBps, d.linkGBps) == 0 && kind == d.kind && simdBits == d.simdBits
                && matrixPeaks.equals(d.matrixPeaks) && formFactor.equals(d.formFactor)
                && Double.compare(pcieGBps, d.pcieGBps) == 0 && platform.equals(d.platform)
                && Double.compare(sfuPerClock, d.sfuPerClock) == 0
                && Double.compare(boardPowerW, d.boardPowerW) == 0 && architecture.equals(d.architecture);
    }

    @Override
    public int hashCode() {
        int h = name.hashCode();
        h = 31 * h + Double.hashCode(memoryGB);
        h = 31 * h + Double.hashCode(memoryBandwidthGBps);
        h = 31 * h + computeUnits;
        h = 31 * h + Double.hashCode(clockMHz);
        h = 31 * h + Double.hashCode(peakMatrixGflops);
        h = 31 * h + Double.hashCode(peakVectorGflops);
        h = 31 * h + Double.hashCode(l2MB);
        h = 31 * h + Double.hashCode(linkGBps);
        h = 31 * h + kind.hashCode();
        h = 31 * h + simdBits;
        h = 31 * h + matrixPeaks.hashCode();
        h = 31 * h + formFactor.hashCode();
        h = 31 * h + Double.hashCode(pcieGBps);
        h = 31 * h + platform.hashCode();
        h = 31 * h + Double.hashCode(sfuPerClock);
        h = 31 * h + Double.hashCode(boardPowerW);
        return 31 * h + architecture.hashCode();
    }

    /**
     * Its figures as one text (every component but the name, numbers in full; a special-function rate not described
     * as the {@link #DEFAULT_SFU_PER_CLOCK} it is taken as), the same in every run of any JVM: two descriptions under
     * one name tell apart by it (a calibrated model records its custom GPUs' figures).
     */
    public String figures() {
        StringBuilder sb = new StringBuilder();
        for (double v : new double[] {memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops,
                peakVectorGflops, l2MB, linkGBps, simdBits, pcieGBps,
                sfuPerClock > 0 ? sfuPerClock : DEFAULT_SFU_PER_CLOCK, boardPowerW,
                platform.gpusPerNode(), platform.nvlinkDomain(), platform.networkGbpsPerGpu()}) {
            sb.append(Double.toString(v)).append('|');
        }
        matrixPeaks.byColumn().forEach((k, v) -> sb.append(k).append('=').append(Double.toString(v)).append('|'));
        return sb.append(kind.name()).append('|').append(formFactor).append('|').append(platform.linkKind())
                .append('|').append(architecture).toString();
    }

    /** A device without a described special-function rate. */
    public Device(String name, double memoryGB, double memoryBandwidthGBps, int computeUnits, double clockMHz,
            double peakMatrixGflops, double peakVectorGflops, double l2MB, double linkGBps, Kind kind, int simdBits,
            MatrixPeaks matrixPeaks, String formFactor, double pcieGBps, Platform platform) {
        this(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops, peakVectorGflops, l2MB,
                linkGBps, kind, simdBits, matrixPeaks, formFactor, pcieGBps, platform, 0, 0);
    }

    /** A device without a described platform. */
    public Device(String name, double memoryGB, double memoryBandwidthGBps, int computeUnits, double clockMHz,
            double peakMatrixGflops, double peakVectorGflops, double l2MB, double linkGBps, Kind kind, int simdBits,
            MatrixPeaks matrixPeaks, String formFactor, double pcieGBps) {
        this(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops, peakVectorGflops, l2MB,
                linkGBps, kind, simdBits, matrixPeaks, formFactor, pcieGBps, Platform.NONE);
    }

    /** A device without matrix peaks, form factor or PCIe described (the form of earlier descriptions). */
    public Device(String name, double memoryGB, double memoryBandwidthGBps, int computeUnits, double clockMHz,
            double peakMatrixGflops, double peakVectorGflops, double l2MB, double linkGBps, Kind kind, int simdBits) {
        this(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops, peakVectorGflops, l2MB,
                linkGBps, kind, simdBits, MatrixPeaks.NONE, "", 0);
    }

    /** A GPU. */
    public Device(String name, double memoryGB, double memoryBandwidthGBps, int computeUnits, double clockMHz,
            double peakMatrixGflops, double peakVectorGflops, double l2MB, double linkGBps) {
        this(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops, peakVectorGflops, l2MB,
                linkGBps, Kind.GPU, 0);
    }

    /** A GPU without a described link. */
    public Device(String name, double memoryGB, double memoryBandwidthGBps, int computeUnits, double clockMHz,
            double peakMatrixGflops, double peakVectorGflops, double l2MB) {
        this(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops, peakVectorGflops, l2MB, 0);
    }

    /**
     * A CPU machine. Its FP32 peak is {@code cores · clock · simdBits/32 · 2} (one fused multiply-add per lane and
     * cycle) when the clock and vector width are known, else 0.
     *
     * @param name               the machine's name (what a dataset's {@code machine.json} calls it)
     * @param cores              cores (or vCPUs) the workloads ran on
     * @param simdBits           widest vector unit (512 for AVX-512, 256 for AVX2), 0 when unknown
     * @param l2MB               L2 cache per core, MB, 0 when unknown
     * @param clockMHz           clock, MHz, 0 when unknown
     * @param memoryBandwidthGBps memory bandwidth, GB/s, 0 when unknown
     */
    public static Device cpu(String name, int cores, int simdBits, double l2MB, double clockMHz,
            double memoryBandwidthGBps) {
        double peak = cores * clockMHz * 1e-3 * simdBits / 32.0 * 2;
        return new Device(name, 0, memoryBandwidthGBps, cores, clockMHz, peak, peak, l2MB, 0, Kind.CPU, simdBits);
    }

    /** True for a GPU. */
    public boolean isGpu() {
        return kind == Kind.GPU;
    }

    /** The device-to-device link bandwidth per direction, GB/s, if described. */
    public OptionalDouble link() {
        return linkGBps > 0 ? OptionalDouble.of(linkGBps) : OptionalDouble.empty();
    }

    /** A copy with a link bandwidth (GB/s per direction). */
    public Device withLinkGBps(double value) {
        return new Device(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops,
                peakVectorGflops, l2MB, value, kind, simdBits, matrixPeaks, formFactor, pcieGBps, platform,
                sfuPerClock, boardPowerW, architecture);
    }

    /** Peak FP32 FLOP/s for matrix ({@code true}) or vector work. */
    public double peakFlopsPerSecond(boolean matrix) {
        return (matrix ? peakMatrixGflops : peakVectorGflops) * 1e9;
    }

    /**
     * Peak FLOP/s for matrix ({@code true}) or vector work in a precision: matrix work runs on the matrix units of
     * the precision the device runs it in ({@link #runs}: the precision itself where the device has its units, else
     * its fallback), never below the FP32 matrix peak (a V100 has no TF32 units, frameworks then compute in FP32; a
     * precision the device cannot run at all is costed at the FP32 peak); vector work runs at the FP32 vector peak
     * (element-wise kernels compute in FP32 and are bound by memory).
     */
    public double peakFlopsPerSecond(Precision precision, boolean matrix) {
        if (!matrix) {
            return peakVectorGflops * 1e9;
        }
        Precision p = runs(precision).orElse(Precision.FP32);
        double units = p == Precision.FP32 ? 0 : matrixPeaks.get(p.peakColumn());
        return Math.max(units, peakMatrixGflops) * 1e9;
    }

    /** The dense peak of the matrix units of a catalog column ({@code fp8}, {@code bf16}...), GFLOP/s; 0 if none. */
    public double matrixPeak(String column) {
        return matrixPeaks.get(java.util.Objects.requireNonNull(column, "column"));
    }

    /**
     * The precision this device runs matrix work of {@code precision} in: the precision itself where it has those
     * matrix units (FP32 always; every precision on a CPU), else the first of its fallbacks it has
     * ({@link Precision#fallback()}); empty where it cannot run it (BF16 without BF16 units, FP8 and FP4 without
     * FP8 units).
     */
    public Optional<Precision> runs(Precision precision) {
        Precision p = precision;
        while (kind == Kind.GPU && p != Precision.FP32 && matrixPeaks.get(p.peakColumn()) <= 0) {
            Optional<Precision> next = p.fallback();
            if (next.isEmpty()) {
                return Optional.empty();
            }
            p = next.get();
        }
        return Optional.of(p);
    }

    /**
     * Whether matrix work in a precision runs on matrix units well beyond the FP32 ones (tensor cores: at least three
     * times the FP32 vector peak), which sustain a different fraction of their peak than the FP32 units.
     */
    public boolean matrixUnits(Precision precision) {
        return peakFlopsPerSecond(precision, true) >= 3 * peakVectorGflops * 1e9;
    }

    /** A copy with the catalog's matrix peaks, form factor, PCIe bandwidth and platform. */
    public Device withCatalogFigures(MatrixPeaks peaks, String form, double pcie, Platform system) {
        return new Device(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops,
                peakVectorGflops, l2MB, linkGBps, kind, simdBits, peaks, form, pcie, system, sfuPerClock,
                boardPowerW, architecture);
    }

    /**
     * Exponentials per second of the special-function units, the softmax's share of a fused attention kernel:
     * compute units × clock × {@link #sfuPerClock()} ({@link #DEFAULT_SFU_PER_CLOCK} where not described). An H100
     * SXM: 132 × 1,980 MHz × 16 = 4.2·10¹², against 989·10¹² FLOP/s of its BF16 tensor cores.
     */
    public double exponentialsPerSecond() {
        return computeUnits * clockMHz * 1e6 * (sfuPerClock > 0 ? sfuPerClock : DEFAULT_SFU_PER_CLOCK);
    }

    /**
     * The matrix work in a precision that the board's power sustains, FLOP/s: {@code flopsAtOneKilowatt} (the 16-bit
     * rate a board of 1 kW sustains) times the cube root of {@code boardPowerW} over 1 kW, times the precision's peak
     * over the 16-bit one (BF16's, else FP16's). Dynamic power grows as the clock times the voltage squared, and the
     * voltage with the clock, so the clock (and the work) a board's power sustains grows as the power's cube root; a
     * board sustains the same fraction of each precision's data-sheet peak. Empty where the board power is not
     * described, the work does not run on matrix units or the device has no 16-bit ones.
     */
    public OptionalDouble powerSustainedFlopsPerSecond(Precision precision, double flopsAtOneKilowatt) {
        Precision p = runs(precision).orElse(Precision.FP32);
        double sixteen = matrixPeaks.get("bf16") > 0 ? matrixPeaks.get("bf16") : matrixPeaks.get("fp16");
        if (boardPowerW <= 0 || kind != Kind.GPU || !matrixUnits(p) || sixteen <= 0) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(Math.cbrt(boardPowerW / 1000.0) * flopsAtOneKilowatt * peakFlopsPerSecond(p, true)
                / (sixteen * 1e9));
    }

    /** Peak memory bandwidth in bytes per second. */
    public double bytesPerSecond() {
        return memoryBandwidthGBps * 1e9;
    }

    /** The roofline ridge point: FLOPs per byte above which work is compute-bound. */
    public double ridgeFlopsPerByte(boolean matrix) {
        return peakFlopsPerSecond(matrix) / bytesPerSecond();
    }

    /** L2 size in bytes. */
    public double l2Bytes() {
        return l2MB * 1024 * 1024;
    }

    /**
     * A lookup key: the name lower-cased with everything but letters and digits removed (spaces, punctuation,
     * symbols). Letters and digits outside ASCII are kept, so that {@code "H1é00"} is no alias of the H100.
     */
    public static String key(String deviceName) {
        java.util.Objects.requireNonNull(deviceName, "deviceName");
        return deviceName.toLowerCase(java.util.Locale.ROOT).replaceAll("[^\\p{L}\\p{N}]", "");
    }
}
