package org.scaledl.io;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.scaledl.InvalidInputException;
import org.scaledl.workload.Device;

/**
 * Devices by name. The bundled catalog ({@code gpu_catalog.csv}) describes 47 GPUs from their data sheets:
 * memory, bandwidth, SMs or CUs, clock, L2, the FP32 peaks, the dense peaks of the matrix units per precision (TF32,
 * FP16, BF16, INT8), form factor, the GPU-to-GPU link (NVLink, Infinity Fabric) and PCIe, each row with its source
 * ({@code GPU_CATALOG.md}). For the GPUs whose kernels NeuSight and DeepBench measured, the figures their measurements
 * were described with (NeuSight's {@code device_configs}, DeepBench's specifications) replace the data sheet's
 * memory, bandwidth, SMs, clock, FP32 peaks and L2, so that a model fitted on those measurements and the files saved
 * with it predict what they predicted. Names are matched ignoring case, spaces and punctuation ({@link Device#key}),
 * aliases included ({@code "A100-SXM4-80GB"}, {@code "V100"}).
 *
 * <p>User files ({@link #read}) may use the catalog's layout (columns {@code name, memory_GB, memory_bw_GBps, sms,
 * boost_clock_MHz, l2_MB, fp32_vector_TFLOPS} and optionally the others of {@code gpu_catalog.csv}) or NeuSight's
 * {@code device_configs.csv} layout ({@code gpu, dev_mem_GB, mem_bw_GBps, num_sm_or_cu, freq_MHz, l2_cache_MB} and
 * either {@code fp32_peak_GFLOPS} or both {@code fp32_peak_matrix_GFLOPS} and {@code fp32_peak_vector_GFLOPS};
 * optional {@code label_dir_name} alias and {@code link_GBps}).
 *
 * <pre>{@code
 * DeviceCatalog gpus = DeviceCatalog.bundled();   // or DeviceCatalog.bundled().with(DeviceCatalog.read(myCsv))
 * Device a100 = gpus.require("NVIDIA A100-SXM4-80GB");
 * }</pre>
 */
public final class DeviceCatalog {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DeviceCatalog.class);

    private final Map<String, Device> byKey;
    private final List<Device> devices;
    /** Where each device of a user's file was read ({@code file:line}), by device name. */
    private final Map<String, String> origins;

    private DeviceCatalog(Map<String, Device> byKey, List<Device> devices) {
        this(byKey, devices, Map.of());
    }

    private DeviceCatalog(Map<String, Device> byKey, List<Device> devices, Map<String, String> origins) {
        this.byKey = Collections.unmodifiableMap(new LinkedHashMap<>(byKey));
        this.devices = List.copyOf(devices);
        this.origins = Map.copyOf(origins);
    }

    /** Column names every file in NeuSight's layout needs. */
    private static final String[] NEUSIGHT_REQUIRED = {"gpu", "dev_mem_GB", "mem_bw_GBps", "num_sm_or_cu", "freq_MHz",
        "l2_cache_MB"};

    /** The most memory a catalog row's GPU may hold, GB (today's hold up to 288; a larger one is a unit slip). */
    static final double MAX_GPU_MEMORY_GB = 4096;
    /** Column names every file in the catalog's layout needs. */
    private static final String[] CATALOG_REQUIRED = {"name", "memory_GB", "memory_bw_GBps", "sms",
        "boost_clock_MHz", "l2_MB", "fp32_vector_TFLOPS"};

    /** The data-sheet catalog bundled with the library. */
    private static final String BUNDLED_CATALOG = "gpu_catalog.csv";

    /** Descriptions the bundled measurements were made with, which replace the data sheet's figures. */
    private static final List<String> MEASURED = List.of("neusight_devices.csv", "deepbench_devices.csv");

    private static final DeviceCatalog BUNDLED = load();

    /** The bundled catalog's columns, read once and only when a user's catalog is checked against them. */
    private static final class CatalogColumns {
        static final List<String> ALL = resource(BUNDLED_CATALOG, CATALOG_REQUIRED).columns();
        /** The matrix-peak columns' precisions the predictions read ({@code bf16}, {@code fp8}...). */
        static final java.util.Set<String> PEAKS = java.util.Arrays.stream(org.scaledl.workload.Precision.values())
                .map(org.scaledl.workload.Precision::peakColumn).filter(java.util.Objects::nonNull)
                .collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    /**
     * The bundled catalog (see above): data-sheet rows of V100, A100, H100, H200, L4, L40S, A10, T4, P100, P4,
     * MI100, MI210, MI250, MI300X and the older DeepBench GPUs, with NeuSight's and DeepBench's descriptions for the
     * GPUs they measured.
     */
    public static DeviceCatalog bundled() {
        return BUNDLED;
    }

    private static DeviceCatalog load() {
        CsvTable sheet = resource(BUNDLED_CATALOG, CATALOG_REQUIRED);
        Map<String, Device> measured = new LinkedHashMap<>();
        java.util.Set<String> neusight = new java.util.HashSet<>();
        for (String name : MEASURED) {
            CsvTable t = resource(name, NEUSIGHT_REQUIRED);
            for (int r = 0; r < t.size(); r++) {
                Device d = neusightRow(t, r);
                if (name.startsWith("neusight")) {
                    neusight.add(d.name());
                }
                measured.putIfAbsent(Device.key(d.name()), d);
                int row = r;
                t.opt(r, "label_dir_name").ifPresent(a -> measured.putIfAbsent(Device.key(a), measured.get(
                        Device.key(t.get(row, "gpu")))));
            }
        }
        Map<String, Device> byKey = new LinkedHashMap<>();
        List<Device> all = new ArrayList<>();
        for (int r = 0; r < sheet.size(); r++) {
            Device d = catalogRow(sheet, r);
            List<String> names = names(sheet, r);
            Device m = names.stream().map(n -> measured.get(Device.key(n))).filter(java.util.Objects::nonNull)
                    .findFirst().orElse(null);
            if (m != null) {
                // NeuSight's name is the one its measurements (and models fitted on them) use
                String primary = neusight.contains(m.name()) ? m.name() : d.name();
                if (!primary.equals(d.name())) {
                    names.add(0, primary);
                }
                d = new Device(primary, m.memoryGB(), m.memoryBandwidthGBps(), m.computeUnits(), m.clockMHz(),
                        m.peakMatrixGflops(), m.peakVectorGflops(), m.l2MB(), d.linkGBps(), Device.Kind.GPU, 0,
                        d.matrixPeaks(), d.formFactor(), d.pcieGBps(), d.platform(), d.sfuPerClock(),
                        d.boardPowerW(), d.architecture());
            }
            add(byKey, all, d, names);
        }
        // measured devices the data sheet does not list keep their measured description
        measured.forEach((k, d) -> {
            if (!byKey.containsKey(k)) {
                add(byKey, all, d, List.of(d.name()));
            }
        });
        return new DeviceCatalog(byKey, all);
    }

    private static void add(Map<String, Device> byKey, List<Device> all, Device d, List<String> names) {
        boolean added = false;
        for (String n : names) {
            if (byKey.putIfAbsent(Device.key(n), d) == null) {
                added = true;
            }
        }
        if (added && !all.contains(d)) {
            all.add(d);
        }
    }

    /** The row's name and its aliases. */
    private static List<String> names(CsvTable t, int r) {
        List<String> out = new ArrayList<>();
        out.add(t.get(r, "name"));
        t.opt(r, "aliases").ifPresent(a -> {
            for (String x : a.split(";")) {
                if (!x.isBlank()) {
                    out.add(x.trim());
                }
            }
        });
        return out;
    }

    /** The optional column of exponentials per compute unit and clock ({@link Device#sfuPerClock()}). */
    static final String SFU_COLUMN = "sfu_per_clk_per_sm";

    private static Device catalogRow(CsvTable t, int r) {
        String name = t.get(r, "name");
        try {
            double vector = 1e3 * t.numberInRange(r, "fp32_vector_TFLOPS", 1e-3, 1e6);
            java.util.OptionalDouble fp32Matrix = t.optionalNumberInRange(r, "fp32_matrix_TFLOPS", 1e-3, 1e6);
            double matrix = fp32Matrix.isPresent() ? 1e3 * fp32Matrix.getAsDouble() : vector;
            java.util.TreeMap<String, Double> byColumn = new java.util.TreeMap<>();
            for (String column : t.columns()) {
                String prefix = peakPrefix(column);
                if (prefix != null && t.opt(r, column).isPresent()) {
                    byColumn.put(prefix, 1e3 * t.numberInRange(r, column, 1e-3, 1e7));
                }
            }
            // a narrower type's units are faster than a wider one's on every part made: a peak below the wider one's is
            // likely a slip (PFLOP/s for TFLOP/s, a per-SM figure), and its jobs would run slower than in 16 bits
            double sixteen = Math.max(byColumn.getOrDefault("bf16", 0.0), byColumn.getOrDefault("fp16", 0.0));
            double eight = Math.max(byColumn.getOrDefault("fp8", 0.0), byColumn.getOrDefault("mxfp8", 0.0));
            for (String column : t.columns()) {
                String prefix = peakPrefix(column);
                if (prefix == null || !CatalogColumns.PEAKS.contains(prefix) || !byColumn.containsKey(prefix)) {
                    continue;
                }
                double peak = byColumn.get(prefix);
                if (peak > MAX_MATRIX_OVER_VECTOR * vector) {
                    LOG.warn("{}:{}: {} {} is {} times the FP32 vector peak {} TFLOP/s of '{}', where matrix units do at "
                            + "most about 300 times (Rubin's FP4): GFLOP/s written as TFLOP/s? Its {} products are "
                            + "predicted at it", t.source(), t.line(r), column, peak / 1e3, String.format(
                            java.util.Locale.ROOT, "%.0f", peak / vector), vector / 1e3,
                            InvalidInputException.printable(name, 60), prefix);
                }
                double wider = "fp4".equals(prefix) ? eight : "fp8".equals(prefix) || "mxfp8".equals(prefix)
                        ? sixteen : 0;
                if (peak < matrix) {
                    // Device.peakFlopsPerSecond never goes below the FP32 matrix peak: say so, as a typo may be it
                    LOG.warn("{}:{}: {} {} is below the FP32 peak {} TFLOP/s of '{}': its {} products are predicted "
                            + "at the FP32 peak (libraries run them on the faster units)", t.source(), t.line(r),
                            column, peak / 1e3, matrix / 1e3, name, prefix);
                } else if (peak < wider) {
                    LOG.warn("{}:{}: {} {} is below the {} peak {} TFLOP/s of '{}': its {} products are predicted at "
                            + "that rate, slower than the wider type's (a figure in PFLOP/s, or per GPU of a pair?)",
                            t.source(), t.line(r), column, peak / 1e3, "fp4".equals(prefix) ? "8-bit" : "16-bit",
                            wider / 1e3, name, prefix);
                }
            }
            String link = t.opt(r, "link_kind").orElse("");
            if (link.matches("(?i)nvlink.*") && t.opt(r, "link_GBps").isEmpty()) {
                // without its bandwidth the NVLink would be priced as PCIe (an Infinity Fabric row without one, as
                // the bundled MI250's, is priced so: its bandwidth per GPU pair is not a single figure)
                throw new IllegalArgumentException("link_kind " + InvalidInputException.printable(link, 40)
                        + " needs link_GBps (the GPU's link bandwidth, one direction, GB/s)");
            }
            int node = t.optionalIntInRange(r, "gpus_per_node", 1, 1 << 10).orElse(0);
            int domain = t.optionalIntInRange(r, "nvlink_domain", 1, 1 << 16).orElse(0);
            if (domain > 2 && node > 0 && link.matches("(?i)nvlink.*|nvswitch.*")) {
                // an NVLink domain is a bridged pair of cards (H100 NVL: 2), or joins whole nodes as --nvlink-domain
                // and a table's nvlink_domain do (a server without NVLink gives 1)
                org.scaledl.workload.Topology.domainProblem(domain, node).ifPresent(p -> {
                    throw new IllegalArgumentException("nvlink_domain " + domain + " with gpus_per_node " + node
                            + ": " + p + " (or a bridged pair of cards, 2)");
                });
            }
            Device.Platform platform = new Device.Platform(link, node, domain,
                    t.optionalNumberInRange(r, "network_Gbps_per_gpu", 1e-3, 1e5).orElse(0));
            // (read in the order the row's cells have always been checked)
            // (a GPU's memory in GB: beyond 4,096, MiB written for GB, which fitted every layout)
            double memory = t.numberInRange(r, "memory_GB", 0.01, MAX_GPU_MEMORY_GB);
            double bandwidth = t.numberInRange(r, "memory_bw_GBps", 0.1, 1e6);
            int sms = t.intInRange(r, "sms", 1, 1 << 20);
            double clock = t.numberInRange(r, "boost_clock_MHz", 10, 1e5);
            double l2 = t.numberInRange(r, "l2_MB", 1e-3, 1e4);
            warnImplausible(t, r, name, "fp32_vector_TFLOPS", vector, sms, clock, "memory_bw_GBps", bandwidth);
            Device d = new Device(name, memory, bandwidth, sms, clock, matrix, vector, l2,
                    t.optionalNumberInRange(r, "link_GBps", 1e-3, 1e5).orElse(0), Device.Kind.GPU, 0,
                    new Device.MatrixPeaks(byColumn), t.opt(r, "form_factor").orElse(""),
                    t.optionalNumberInRange(r, "pcie_GBps", 1e-3, 1e4).orElse(0), platform,
                    t.optionalNumberInRange(r, SFU_COLUMN, 1, 1e4).orElse(0),
                    t.optionalNumberInRange(r, "tdp_W", 1, 1e5).orElse(0),
                    architecture(t.opt(r, "architecture").orElse("")));
            warnDescription(t, r, d, link, eight > 0);
            return d;
        } catch (IllegalArgumentException e) {
            throw InvalidInputException.atLine(t.source(), t.line(r), e.getMessage());
        }
    }

    /** What the catalog's rows describe (a holder: the bundled catalog is read before this class's lists exist). */
    static final class Known {
        private Known() {
        }

        /**
         * The generations the catalog describes (an architecture is one of them, or a variant whose name starts with
         * one: {@code Blackwell Ultra}); the physics that depends on a generation reads these names
         * ({@link Device#tensorMemoryAccelerator()}, {@link Device#fp8EitherLayout()}).
         */
        static final List<String> ARCHITECTURES = List.of("Maxwell", "Pascal", "Volta", "Turing", "Ampere",
                "Ada", "Hopper", "Blackwell", "Rubin", "GCN5", "CDNA");

        /** The form factors the catalog describes (a PCIe card's may say its generation: {@code PCIe Gen5}). */
        static final List<String> FORM_FACTORS = List.of("SXM", "PCIe", "OAM", "Superchip");
    }

    /**
     * A row's architecture as the catalog names it: the vendor's name before it dropped ({@code NVIDIA Blackwell} is
     * {@code Blackwell}).
     */
    private static String architecture(String given) {
        String a = given.strip();
        for (String vendor : List.of("NVIDIA ", "AMD ")) {
            if (a.regionMatches(true, 0, vendor, 0, vendor.length())) {
                return a.substring(vendor.length()).strip();
            }
        }
        return a;
    }

    /**
     * Warns of a row's description that the physics reads otherwise than its writer likely meant: an architecture or
     * form factor the catalog does not know (a generation's physics then does not apply: no tensor memory
     * accelerator, a transposed copy of per-tensor FP8 tensors; an unknown board is not a PCIe card), a GPU with 8-bit
     * units whose architecture is not given, a board power below any GPU's (kW written as W: its long products were
     * capped six times slower), an NVLink slower than the row's PCIe or than 10 GB/s (TB/s written as GB/s) or faster
     * than 1,800 GB/s (Gb/s written as GB/s) and a network a GPU beyond 1 to 1,600 Gb/s (a node's figure).
     */
    private static void warnDescription(CsvTable t, int r, Device d, String link, boolean eightBit) {
        String who = InvalidInputException.printable(d.name(), 60);
        String said = "no tensor memory accelerator, and per-tensor FP8 with a transposed copy beside each tensor";
        String architecture = d.architecture();
        if (!architecture.isEmpty() && Known.ARCHITECTURES.stream().noneMatch(d::architectureIs)) {
            LOG.warn("{}:{}: architecture '{}' of '{}' is none the catalog knows ({}): it is predicted as a GPU of no "
                    + "known generation ({})", t.source(), t.line(r), InvalidInputException.printable(architecture,
                    40), who, String.join(", ", Known.ARCHITECTURES), said);
        } else if (architecture.isEmpty() && eightBit) {
            LOG.warn("{}:{}: '{}' has 8-bit matrix units but no architecture: it is predicted as a GPU of no known "
                    + "generation ({}); give its architecture ({})", t.source(), t.line(r), who, said,
                    String.join(", ", Known.ARCHITECTURES));
        }
        String form = d.formFactor();
        if (!form.isBlank() && Known.FORM_FACTORS.stream().noneMatch(d::formFactorIs)) {
            LOG.warn("{}:{}: form_factor '{}' of '{}' is none the catalog knows ({}): it is taken for a board that is "
                    + "not a PCIe card (PCIe for a card: a Blackwell one takes FP8 operands in one layout only)",
                    t.source(), t.line(r), InvalidInputException.printable(form, 40), who,
                    String.join(", ", Known.FORM_FACTORS));
        }
        double power = d.boardPowerW();
        if (power > 0 && power < MIN_BOARD_POWER_W) {
            LOG.warn("{}:{}: tdp_W {} of '{}' is below any GPU board's (a T4 draws 70): kW written as W? Its long "
                    + "products are predicted at what that power sustains", t.source(), t.line(r),
                    String.format(java.util.Locale.ROOT, "%.3g", power), who);
        }
        double linkGBps = d.linkGBps();
        double pcie = d.pcieGBps();
        if (link.matches("(?i)nvlink.*") && linkGBps > 0 && (linkGBps < MIN_NVLINK_GBPS || linkGBps < pcie)) {
            LOG.warn("{}:{}: link_GBps {} of '{}' ({}) is below {}: TB/s written as GB/s, or another figure? Its "
                    + "collectives are predicted at it", t.source(), t.line(r), String.format(java.util.Locale.ROOT,
                    "%.3g", linkGBps), who, InvalidInputException.printable(link, 20), linkGBps < pcie
                    ? "its PCIe's " + String.format(java.util.Locale.ROOT, "%.3g", pcie) + " GB/s"
                    : "any NVLink's (" + String.format(java.util.Locale.ROOT, "%.0f", MIN_NVLINK_GBPS) + " GB/s)");
        } else if (link.matches("(?i)nvlink.*") && linkGBps > MAX_NVLINK_GBPS) {
            LOG.warn("{}:{}: link_GBps {} of '{}' ({}) is above any NVLink's ({} GB/s a GPU, one direction): Gb/s "
                    + "written as GB/s ({} GB/s)? Its collectives are predicted at it", t.source(), t.line(r),
                    String.format(java.util.Locale.ROOT, "%.4g", linkGBps), who,
                    InvalidInputException.printable(link, 20), String.format(java.util.Locale.ROOT, "%.0f",
                            MAX_NVLINK_GBPS), String.format(java.util.Locale.ROOT, "%.4g", linkGBps / 8));
        }
        double network = d.platform().networkGbpsPerGpu();
        if (network > MAX_NETWORK_GBPS_PER_GPU || network > 0 && network < MIN_NETWORK_GBPS_PER_GPU) {
            int node = Math.max(1, d.platform().gpusPerNode());
            LOG.warn("{}:{}: network_Gbps_per_gpu {} of '{}' is {} any GPU's network ({} to {} Gb/s a GPU): {} Its "
                    + "collectives between nodes are predicted at it", t.source(), t.line(r),
                    String.format(java.util.Locale.ROOT, "%.4g", network), who, network > MAX_NETWORK_GBPS_PER_GPU
                            ? "above" : "below", String.format(java.util.Locale.ROOT, "%.0f",
                            MIN_NETWORK_GBPS_PER_GPU), String.format(java.util.Locale.ROOT, "%.0f",
                            MAX_NETWORK_GBPS_PER_GPU), network > MAX_NETWORK_GBPS_PER_GPU ? "a node's figure ("
                            + node + " GPUs a node: " + String.format(java.util.Locale.ROOT, "%.4g", network / node)
                            + " a GPU)?" : "GB/s or TB/s for Gb/s, or a node's shared by many GPUs?");
        }
    }

    /**
     * Above any NVLink's bandwidth a GPU, one direction, GB/s: NVLink 5's 900 twice over (a figure in Gb/s is 8 times
     * its GB/s).
     */
    static final double MAX_NVLINK_GBPS = 1800;
    /**
     * Above any scale-out network a GPU, Gb/s: ConnectX-8's 800 twice over (a node's eight adapters written for one
     * GPU's are 8 times it).
     */
    static final double MAX_NETWORK_GBPS_PER_GPU = 1600;
    /** Below any scale-out network a GPU, Gb/s (10 Gb/s Ethernet a node of eight). */
    static final double MIN_NETWORK_GBPS_PER_GPU = 1;

    /** Below any GPU board's power, W (a T4's is 70). */
    static final double MIN_BOARD_POWER_W = 25;
    /** Below any NVLink's bandwidth a GPU, one direction, GB/s (the first, NVLink 1 on a P100, 20 a link). */
    static final double MIN_NVLINK_GBPS = 10;

    /**
     * The precision a matrix-peak column is for ({@code bf16_TFLOPS} -> {@code bf16}, {@code int8_TOPS} ->
     * {@code int8}); null for the FP32 and vector columns, which are not matrix-unit peaks.
     */
    private static String peakPrefix(String column) {
        String prefix = column.endsWith("_TFLOPS") ? column.substring(0, column.length() - 7)
                : column.endsWith("_TOPS") ? column.substring(0, column.length() - 5) : null;
        if (prefix == null || prefix.startsWith("fp32") || prefix.endsWith("_vector") || prefix.isEmpty()) {
            return null;
        }
        return prefix;
    }

    /**
     * The FP32 operations a compute unit does a clock, the FP32 operations a byte of memory traffic, and a matrix
     * peak over the FP32 vector peak, between which every GPU of the bundled catalog lies with a wide margin (127 to
     * 285 a clock, 5 to 106 a byte, at most 305 times for Rubin's FP4): a row outside them has a figure in another
     * unit (GFLOP/s written as TFLOP/s, TB/s as GB/s).
     */
    static final double MIN_FLOPS_PER_CLOCK = 8;
    static final double MAX_FLOPS_PER_CLOCK = 4096;
    static final double MIN_FLOPS_PER_BYTE = 0.5;
    static final double MAX_FLOPS_PER_BYTE = 1000;
    static final double MAX_MATRIX_OVER_VECTOR = 3000;

    /**
     * Warns of a row whose FP32 peak, compute units and clock, or peak and memory bandwidth, no GPU has together: a
     * figure in the wrong unit, whose jobs would be predicted a thousand times off without a word.
     */
    private static void warnImplausible(CsvTable t, int r, String name, String peakColumn, double vectorFlopsG,
            int units, double clockMHz, String bandwidthColumn, double bandwidthGBps) {
        double perClock = vectorFlopsG * 1e9 / (units * clockMHz * 1e6);
        if (perClock < MIN_FLOPS_PER_CLOCK || perClock > MAX_FLOPS_PER_CLOCK) {
            LOG.warn("{}:{}: '{}' does {} FP32 operations a compute unit a clock ({} over its units and clock), where "
                    + "GPUs do about 100 to 300: a peak in another unit (GFLOP/s written as TFLOP/s)? Its jobs are "
                    + "predicted from these figures", t.source(), t.line(r), InvalidInputException.printable(name,
                    60), String.format(java.util.Locale.ROOT, "%.3g", perClock), peakColumn);
        }
        double perByte = vectorFlopsG / bandwidthGBps;
        if (perByte < MIN_FLOPS_PER_BYTE || perByte > MAX_FLOPS_PER_BYTE) {
            LOG.warn("{}:{}: '{}' does {} FP32 operations a byte of memory traffic ({} over {}), where GPUs do about "
                    + "5 to 110: a bandwidth in TB/s written as GB/s, or a peak in another unit? Its jobs are predicted "
                    + "from these figures", t.source(), t.line(r), InvalidInputException.printable(name, 60),
                    String.format(java.util.Locale.ROOT, "%.3g", perByte), peakColumn, bandwidthColumn);
        }
    }

    private static Device neusightRow(CsvTable t, int r) {
        String name = t.get(r, "gpu");
        double matrix;
        double vector;
        Optional<String> single = t.opt(r, "fp32_peak_GFLOPS");
        if (single.isPresent()) {
            matrix = t.numberInRange(r, "fp32_peak_GFLOPS", 1, 1e9);
            vector = matrix;
        } else if (t.opt(r, "fp32_peak_matrix_GFLOPS").isPresent()
                && t.opt(r, "fp32_peak_vector_GFLOPS").isPresent()) {
            matrix = t.numberInRange(r, "fp32_peak_matrix_GFLOPS", 1, 1e9);
            vector = t.numberInRange(r, "fp32_peak_vector_GFLOPS", 1, 1e9);
        } else {
            throw InvalidInputException.atLine(t.source(), t.line(r), "device '" + name
                    + "' has neither fp32_peak_GFLOPS nor both matrix and vector peaks");
        }
        try {
            // (read in the order the row's cells have always been checked)
            double memory = t.numberInRange(r, "dev_mem_GB", 0.01, MAX_GPU_MEMORY_GB);
            double bandwidth = t.numberInRange(r, "mem_bw_GBps", 0.1, 1e6);
            int units = t.intInRange(r, "num_sm_or_cu", 1, 1 << 20);
            double clock = t.numberInRange(r, "freq_MHz", 10, 1e5);
            double l2 = t.numberInRange(r, "l2_cache_MB", 1e-3, 1e4);
            warnImplausible(t, r, name, single.isPresent() ? "fp32_peak_GFLOPS" : "fp32_peak_vector_GFLOPS", vector,
                    units, clock, "mem_bw_GBps", bandwidth);
            return new Device(name, memory, bandwidth, units, clock, matrix, vector, l2,
                    t.optionalNumberInRange(r, "link_GBps", 1e-3, 1e5).orElse(0));
        } catch (IllegalArgumentException e) {
            throw InvalidInputException.atLine(t.source(), t.line(r), e.getMessage());
        }
    }

    private static CsvTable resource(String name, String... required) {
        try (InputStream in = DeviceCatalog.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("bundled device file " + name + " is missing from the jar");
            }
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return CsvTable.parse("classpath:org/scaledl/io/" + name, text.lines().toList(), required);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Reads and merges catalog files, each in the catalog's layout or NeuSight's.
     *
     * @throws InvalidInputException naming the file and line of a bad row, of a name or alias given twice (with the
     *         line that gave it first), of a name with control characters, or a file in neither layout
     */
    public static DeviceCatalog read(Path... files) {
        for (Path f : java.util.Objects.requireNonNull(files, "files")) {
            java.util.Objects.requireNonNull(f, "a file of files");
        }
        Map<String, Device> byKey = new LinkedHashMap<>();
        Map<String, String> firstAt = new LinkedHashMap<>();
        Map<String, String> origins = new LinkedHashMap<>();
        List<Device> devices = new ArrayList<>();
        for (Path file : files) {
            CsvTable head = CsvTable.read(file);
            boolean catalog = head.has("name");
            if (!catalog && !head.has("gpu")) {
                throw InvalidInputException.atLine(file.toString(), 1, "not a device catalog: no column 'name' (the "
                        + "catalog's layout, docs/formats.md) or 'gpu' (NeuSight's device table) (have "
                        + String.join(", ", head.columns()) + ")");
            }
            CsvTable t = CsvTable.read(file, catalog ? CATALOG_REQUIRED : NEUSIGHT_REQUIRED);
            KernelTables.noRows(t);
            for (int r = 0; r < t.size(); r++) {
                Device d;
                List<String> names;
                if (catalog) {
                    d = catalogRow(t, r);
                    names = names(t, r);
                } else {
                    d = neusightRow(t, r);
                    names = new ArrayList<>(List.of(d.name()));
                    t.opt(r, "label_dir_name").ifPresent(names::add);
                }
                String at = t.source() + ":" + t.line(r);
                for (String n : names) {
                    if (n.chars().anyMatch(ch -> ch < 0x20 || ch == 0x7f)) {
                        throw InvalidInputException.atLine(t.source(), t.line(r), "device name or alias '"
                                + InvalidInputException.printable(n, 60) + "' holds control characters");
                    }
                    String prev = firstAt.putIfAbsent(Device.key(n), at);
                    if (prev != null && !prev.equals(at)) {
                        throw InvalidInputException.atLine(t.source(), t.line(r), "device '" + n + "' is named twice "
                                + "(first at " + prev + "); keep one row per GPU");
                    }
                }
                origins.put(d.name(), at);
                add(byKey, devices, d, names);
            }
            if (catalog) {
                // a misspelt column (bf16_TFLOP) would leave every GPU of the file without that figure, silently
                for (String c : t.columns()) {
                    if (CatalogColumns.ALL.contains(c) || peakPrefix(c) != null) {
                        continue;
                    }
                    java.util.Optional<String> near = org.scaledl.Suggestions.misspelt(c, CatalogColumns.ALL)
                            .filter(k -> !t.columns().contains(k));
                    if (near.isPresent()) {
                        LOG.warn("{}:1: column '{}' is not one the catalog reads (did you mean '{}'?); its GPUs are "
                                + "read without it", t.source(), c, near.get());
                    } else {
                        LOG.warn("{}:1: column '{}' is not one the catalog reads; its GPUs are read without it (the "
                                + "columns: docs/formats.md)", t.source(), c);
                    }
                }
                for (String c : t.columns()) {
                    String prefix = peakPrefix(c);
                    if (prefix != null && !CatalogColumns.ALL.contains(c) && !CatalogColumns.PEAKS.contains(prefix)) {
                        // a peak of no precision scaledl predicts (fp16_tensor_TFLOPS) and not of the catalog's own
                        // columns (its int8_TOPS, kept for reference): read, never used
                        List<String> peaks = CatalogColumns.ALL.stream().filter(k -> peakPrefix(k) != null
                                && CatalogColumns.PEAKS.contains(peakPrefix(k))).toList();
                        // a catalog column in another case (FP8_TFLOPS): named, as a misspelt one is
                        java.util.Optional<String> cased = org.scaledl.Suggestions.misspelt(c, CatalogColumns.ALL)
                                .filter(k -> !t.columns().contains(k));
                        LOG.warn("{}:1: column '{}' is the peak of no precision scaledl predicts{}; its GPUs are read "
                                + "without it (the matrix peaks: {})", t.source(), c, cased.map(k -> " (did you mean '"
                                + k + "'?)").orElse(""), String.join(", ", peaks));
                    }
                }
            }
        }
        return new DeviceCatalog(byKey, devices, origins);
    }

    /**
     * This catalog (the bundled one) plus a user's devices ({@code --devices}): a user's GPU is added under its
     * names, never in place of one this catalog has.
     *
     * @throws InvalidInputException naming the user's row when one of its names or aliases is already a device here,
     *         or a part of one's (typed, it would then mean the user's GPU)
     */
    public DeviceCatalog plusUser(DeviceCatalog user) {
        java.util.Objects.requireNonNull(user, "user");
        Map<String, Device> keys = new LinkedHashMap<>(byKey);
        List<Device> all = new ArrayList<>(devices);
        for (Map.Entry<String, Device> e : user.byKey.entrySet()) {
            Device known = byKey.get(e.getKey());
            String at = user.origins.getOrDefault(e.getValue().name(), "--devices");
            if (known != null) {
                throw InvalidInputException.of(at + ": device '" + e.getValue().name() + "' has a name or alias of "
                        + "the bundled '" + known.name() + "'; give your GPU a name of its own (or leave the row out "
                        + "to use the bundled description)");
            }
            // a part of one bundled GPU's names ("h100 80gb hbm3"), which require() reads as that GPU, would take
            // that typing over from it (a part of several GPUs' names is refused as ambiguous anyway: kept)
            List<Device> containing = e.getKey().length() < 3 ? List.of() : byKey.entrySet().stream()
                    .filter(b -> b.getKey().contains(e.getKey())).map(Map.Entry::getValue).distinct().toList();
            if (containing.size() == 1) {
                throw InvalidInputException.of(at + ": device '" + e.getValue().name() + "' has a name or alias that "
                        + "is part of the bundled '" + containing.get(0).name() + "''s, which it would then mean; "
                        + "give your GPU a name of its own (or leave the row out to use the bundled description)");
            }
            keys.put(e.getKey(), e.getValue());
        }
        for (Device d : user.devices) {
            if (!all.contains(d)) {
                all.add(d);
            }
        }
        return new DeviceCatalog(keys, all, user.origins);
    }

    /**
     * This catalog plus another's devices; a device of the other known here by any of its names or aliases is this
     * catalog's description under all of them.
     */
    public DeviceCatalog with(DeviceCatalog other) {
        java.util.Objects.requireNonNull(other, "other");
        Map<String, Device> byKey = new LinkedHashMap<>(this.byKey);
        List<Device> all = new ArrayList<>(devices);
        for (Device d : other.devices) {
            List<String> keys = other.byKey.entrySet().stream().filter(e -> e.getValue().equals(d))
                    .map(Map.Entry::getKey).toList();
            Device known = keys.stream().map(this.byKey::get).filter(java.util.Objects::nonNull).findFirst()
                    .orElse(null);
            Device target = known != null ? known : d;
            keys.forEach(k -> byKey.putIfAbsent(k, target));
            if (known == null && !all.contains(d)) {
                all.add(d);
            }
        }
        return new DeviceCatalog(byKey, all);
    }

    /** A device by name or alias. */
    public Optional<Device> find(String name) {
        return Optional.ofNullable(byKey.get(Device.key(java.util.Objects.requireNonNull(name, "name"))));
    }

    /**
     * A device by name or alias (ignoring case, spaces and punctuation), or by a part of one that only one device's
     * names contain ({@code "MI300"}: the MI300X).
     *
     * @throws InvalidInputException for an unknown name (with the closest and where to look: {@code scaledl devices},
     *         {@code --devices FILE}) or one that several devices' names contain (naming them)
     */
    public Device require(String name) {
        java.util.Objects.requireNonNull(name, "name");
        Optional<Device> exact = find(name);
        if (exact.isPresent()) {
            return exact.get();
        }
        String key = Device.key(name == null ? "" : name);
        java.util.Set<Device> partial = new java.util.LinkedHashSet<>();
        if (key.length() >= 3) {
            byKey.forEach((k, d) -> {
                if (k.contains(key)) {
                    partial.add(d);
                }
            });
        }
        if (partial.size() == 1) {
            return partial.iterator().next();
        }
        String shown = InvalidInputException.printable(name, 60);
        if (partial.size() > 1) {
            throw InvalidInputException.of("device '" + shown + "' is ambiguous: it could be "
                    + String.join(", ", partial.stream().map(d -> "'" + d.name() + "'").toList()) + "; name one");
        }
        List<String> names = devices.stream().map(Device::name).toList();
        return throwUnknown(shown, names);
    }

    /**
     * The other devices a name also fits ({@code "A100"}, an alias of the A100-SXM4-80GB: the 40 GB and PCIe parts,
     * whose names hold it from a word's start on), in file order; empty where the name is a device's full name or fits
     * no other ({@code "B200"} does not fit the GB200: no word of its name starts so).
     */
    public List<Device> alsoFitting(String name, Device chosen) {
        String key = Device.key(java.util.Objects.requireNonNull(name, "name"));
        // a name that ends the chosen GPU's from a word's start on names it whole ("H20": NVIDIA H20, not H200)
        if (key.length() < 3 || wordRuns(chosen.name()).anyMatch(key::equals)) {
            return List.of();
        }
        return devices.stream().filter(d -> !d.equals(chosen) && wordRuns(d.name()).anyMatch(r -> r.startsWith(key)))
                .toList();
    }

    /**
     * A name from the start of each of its words on, as {@link Device#key}s: {@code "NVIDIA A100-SXM4-80GB"} gives
     * {@code nvidiaa100sxm480gb}, {@code a100sxm480gb}, {@code sxm480gb}, {@code 80gb}.
     */
    private static java.util.stream.Stream<String> wordRuns(String name) {
        List<String> words = List.of(name.split("[^\\p{Alnum}]+"));
        return java.util.stream.IntStream.range(0, words.size())
                .mapToObj(i -> Device.key(String.join("", words.subList(i, words.size()))));
    }

    private static Device throwUnknown(String name, List<String> names) {
        throw InvalidInputException.of("unknown device '" + name + "'" + org.scaledl.Suggestions.closest(name,
                names).map(s -> "; did you mean '" + s + "'?").orElse("") + " (scaledl devices lists the " + names.size()
                + " GPUs of the catalog; --devices FILE adds your own, in Java DeviceCatalog.bundled().with("
                + "DeviceCatalog.read(file)))");
    }

    /** All devices, in file order. */
    public Collection<Device> devices() {
        return devices;
    }
}
