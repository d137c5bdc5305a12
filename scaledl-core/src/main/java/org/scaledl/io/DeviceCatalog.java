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
 * Devices by name, read from CSV files in NeuSight's {@code device_configs.csv} layout: columns {@code gpu},
 * {@code mem_bw_GBps}, {@code num_sm_or_cu}, {@code freq_MHz}, {@code l2_cache_MB}, {@code dev_mem_GB} and either
 * {@code fp32_peak_GFLOPS} (one peak for all FP32 work) or both {@code fp32_peak_matrix_GFLOPS} and
 * {@code fp32_peak_vector_GFLOPS}. An optional {@code label_dir_name} column gives an alias, an optional
 * {@code link_GBps} column the device-to-device link bandwidth per direction. Names are matched ignoring case, spaces
 * and punctuation ({@link Device#key}).
 *
 * <pre>{@code
 * DeviceCatalog gpus = DeviceCatalog.bundled();   // or DeviceCatalog.read(Path.of("my_gpus.csv"))
 * Device h100 = gpus.require("NVIDIA H100 80GB HBM3");
 * }</pre>
 */
public final class DeviceCatalog {
    private final Map<String, Device> byKey;
    private final List<Device> devices;

    private DeviceCatalog(Map<String, Device> byKey, List<Device> devices) {
        this.byKey = Collections.unmodifiableMap(new LinkedHashMap<>(byKey));
        this.devices = List.copyOf(devices);
    }

    /** Column names every catalog file needs. */
    private static final String[] REQUIRED = {"gpu", "dev_mem_GB", "mem_bw_GBps", "num_sm_or_cu", "freq_MHz",
        "l2_cache_MB"};

    /** The catalog files bundled with the library, in lookup order. */
    private static final List<String> BUNDLED = List.of("neusight_devices.csv", "deepbench_devices.csv");

    /** Link bandwidths for bundled devices whose catalog file has none (columns {@code gpu, link_GBps}). */
    private static final String BUNDLED_LINKS = "device_links.csv";

    /**
     * The bundled catalog: NeuSight's 12 GPU descriptions (P4 to H100, AMD MI100/MI210/MI250, A100-SXM4) and the
     * DeepBench GPUs from vendor data sheets (M40, TitanX, TitanX Pascal, TitanXp, 1080Ti, P100, V100, T4, MI25,
     * Vega FE), with NVLink bandwidths of the SXM parts; provenance in the resources' {@code PROVENANCE.md}.
     */
    public static DeviceCatalog bundled() {
        List<CsvTable> tables = new ArrayList<>();
        for (String name : BUNDLED) {
            tables.add(resource(name, REQUIRED));
        }
        DeviceCatalog c = of(tables);
        CsvTable links = resource(BUNDLED_LINKS, "gpu", "link_GBps");
        Map<String, Device> byKey = new LinkedHashMap<>(c.byKey);
        List<Device> all = new ArrayList<>(c.devices);
        for (int r = 0; r < links.size(); r++) {
            Device d = c.find(links.get(r, "gpu")).orElseThrow(() -> new IllegalStateException(
                    "bundled link for an unknown device"));
            Device linked = d.withLinkGBps(links.positiveFinite(r, "link_GBps"));
            byKey.replaceAll((k, v) -> v.equals(d) ? linked : v);
            all.replaceAll(v -> v.equals(d) ? linked : v);
        }
        return new DeviceCatalog(byKey, all);
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

    /** Reads and merges catalog files; a device named twice keeps its first description. */
    public static DeviceCatalog read(Path... files) {
        List<CsvTable> tables = new ArrayList<>();
        for (Path file : files) {
            tables.add(CsvTable.read(file, REQUIRED));
        }
        return of(tables);
    }

    private static DeviceCatalog of(List<CsvTable> tables) {
        Map<String, Device> byKey = new LinkedHashMap<>();
        List<Device> devices = new ArrayList<>();
        for (CsvTable t : tables) {
            for (int r = 0; r < t.size(); r++) {
                String name = t.get(r, "gpu");
                double matrix;
                double vector;
                Optional<String> single = t.opt(r, "fp32_peak_GFLOPS");
                if (single.isPresent()) {
                    matrix = t.positiveFinite(r, "fp32_peak_GFLOPS");
                    vector = matrix;
                } else if (t.opt(r, "fp32_peak_matrix_GFLOPS").isPresent()
                        && t.opt(r, "fp32_peak_vector_GFLOPS").isPresent()) {
                    matrix = t.positiveFinite(r, "fp32_peak_matrix_GFLOPS");
                    vector = t.positiveFinite(r, "fp32_peak_vector_GFLOPS");
                } else {
                    throw InvalidInputException.atLine(t.source(), t.line(r), "device '" + name
                            + "' has neither fp32_peak_GFLOPS nor both matrix and vector peaks");
                }
                Device d;
                try {
                    d = new Device(name, t.positiveFinite(r, "dev_mem_GB"), t.positiveFinite(r, "mem_bw_GBps"),
                            t.positiveInt(r, "num_sm_or_cu"), t.positiveFinite(r, "freq_MHz"), matrix, vector,
                            t.positiveFinite(r, "l2_cache_MB"),
                            t.opt(r, "link_GBps").isPresent() ? t.positiveFinite(r, "link_GBps") : 0);
                } catch (IllegalArgumentException e) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), e.getMessage());
                }
                if (byKey.putIfAbsent(Device.key(name), d) == null) {
                    devices.add(d);
                }
                int row = r;
                t.opt(r, "label_dir_name").ifPresent(alias -> byKey.putIfAbsent(Device.key(alias), byKey.get(
                        Device.key(t.get(row, "gpu")))));
            }
        }
        return new DeviceCatalog(byKey, devices);
    }

    /** This catalog plus another's devices; on a name in both, this catalog's description wins. */
    public DeviceCatalog with(DeviceCatalog other) {
        Map<String, Device> byKey = new LinkedHashMap<>(this.byKey);
        List<Device> all = new ArrayList<>(devices);
        other.byKey.forEach((k, d) -> {
            if (byKey.putIfAbsent(k, d) == null && !all.contains(d)) {
                all.add(d);
            }
        });
        return new DeviceCatalog(byKey, all);
    }

    /** A device by name or alias. */
    public Optional<Device> find(String name) {
        return Optional.ofNullable(byKey.get(Device.key(name)));
    }

    /**
     * A device by name or alias.
     *
     * @throws InvalidInputException naming the device and the known ones when it is absent
     */
    public Device require(String name) {
        return find(name).orElseThrow(() -> {
            List<String> names = devices.stream().map(Device::name).toList();
            return InvalidInputException.of("unknown device '" + name + "'" + org.scaledl.Suggestions.closest(name,
                    names).map(s -> "; did you mean '" + s + "'?").orElse("") + " (known: " + String.join(", ", names)
                    + ")");
        });
    }

    /** All devices, in file order. */
    public Collection<Device> devices() {
        return devices;
    }
}
