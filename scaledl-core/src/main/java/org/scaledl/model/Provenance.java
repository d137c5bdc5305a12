package org.scaledl.model;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where a fitted predictor came from (Tribuo's provenance): enough to tell two models apart and to refit one.
 *
 * <pre>{@code
 * Provenance p = predictor.provenance();
 * p.trainingSamples(); p.cvMre(); p.config().get("layer_cost");
 * }</pre>
 *
 * @param libraryVersion  scaledl version that fitted it
 * @param dataFingerprint SHA-256 of the training samples (workload, configuration and measured time, in order)
 * @param trainingSamples number of training samples
 * @param seed            configured seed
 * @param config          the trainer's configuration, as text
 * @param cvMre           out-of-group MRE of the chosen shrinkage inside the training data (NaN if not
 *                        cross-validated)
 * @param createdAt       fitting time (UTC, ISO-8601)
 * @param devices         names of the devices the training workloads (or operator measurements) carried, sorted;
 *                        empty when they carried none (host measurements without a machine description)
 */
public record Provenance(String libraryVersion, String dataFingerprint, int trainingSamples, long seed,
        Map<String, String> config, double cvMre, String createdAt, List<String> devices) {
    /**
     * Copies.
     *
     * @throws IllegalArgumentException where a count of the configuration ({@link #CALIBRATION_RUNS},
     *         {@code adapted_kernels}: a later calibration adds to it) is no count
     */
    public Provenance {
        config = Map.copyOf(config);
        devices = List.copyOf(devices);
        for (String key : List.of(CALIBRATION_RUNS, ADAPTED_KERNELS)) {
            String n = config.get(key);
            org.scaledl.Checks.argument(n == null || n.matches("\\d{1,9}"), "config.%s is no count: '%s'", key,
                    n == null ? "" : org.scaledl.InvalidInputException.printable(n, 40));
        }
    }

    /** The configuration key counting the kernels a model was adapted on since it was fitted. */
    public static final String ADAPTED_KERNELS = "adapted_kernels";

    /** The configuration key counting the runs a model was calibrated on since it was fitted. */
    public static final String CALIBRATION_RUNS = "calibration_runs";
    /** The configuration key naming the devices of those runs. */
    public static final String CALIBRATION_DEVICES = "calibration_devices";
    /**
     * The configuration key naming the devices of the calibration runs that refit the execution model shared by every
     * GPU (transformers built from a configuration); empty where none did.
     */
    public static final String CALIBRATION_EXECUTION_DEVICES = "calibration_execution_devices";
    /**
     * The configuration key holding, for each device of the calibration runs, a digest of its figures
     * ({@link org.scaledl.workload.Device#figures}) beyond the bundled catalog: {@code name=digest; ...}. A job on a
     * device of that name described otherwise (a {@code --devices} row changed since) is warned of.
     */
    public static final String CALIBRATION_DEVICE_FIGURES = "calibration_device_figures";
    private static final String DEVICE_SEPARATOR = "; ";

    /**
     * The devices of the runs the model was calibrated on since it was fitted ({@code fit --calibrate}), sorted;
     * empty for a model never calibrated, or calibrated by a release that did not record them.
     */
    public List<String> calibrationDevices() {
        String v = config.getOrDefault(CALIBRATION_DEVICES, "");
        return v.isEmpty() ? List.of() : List.of(v.split(DEVICE_SEPARATOR));
    }

    /**
     * The devices of the calibration runs that refit the shared execution model (transformers' runs), sorted; for a
     * model calibrated by a release that did not tell them apart, every calibration run's devices.
     */
    List<String> executionCalibrationDevices() {
        if (!config.containsKey(CALIBRATION_EXECUTION_DEVICES)) {
            return calibrationDevices();
        }
        String v = config.get(CALIBRATION_EXECUTION_DEVICES);
        return v.isEmpty() ? List.of() : List.of(v.split(DEVICE_SEPARATOR));
    }

    /** The version of {@link #figuresDigest}: the text it digests ({@link org.scaledl.workload.Device#figures}). */
    static final String FIGURES_VERSION = "v1:";

    /**
     * The digest of the figures of each device the model was calibrated on, by name; empty for a model never
     * calibrated, or calibrated by a release that did not record them.
     */
    Map<String, String> calibrationDeviceFigures() {
        Map<String, String> out = new TreeMap<>();
        String v = config.getOrDefault(CALIBRATION_DEVICE_FIGURES, "");
        for (String entry : v.isEmpty() ? new String[0] : v.split(DEVICE_SEPARATOR)) {
            int at = entry.lastIndexOf('=');
            if (at > 0) {
                out.put(entry.substring(0, at), entry.substring(at + 1));
            }
        }
        return out;
    }

    /**
     * The digest {@link #calibrationDeviceFigures} records of a device's figures: {@code v1:} and 16 hex digits of
     * their SHA-256 ({@link org.scaledl.workload.Device#figures}'s text of this release; a digest of another version
     * is not compared).
     */
    static String figuresDigest(org.scaledl.workload.Device d) {
        return FIGURES_VERSION + org.scaledl.Digests.sha256(d.figures()).substring(0, 16);
    }

    /** The same provenance with another configuration. */
    Provenance withConfig(Map<String, String> value) {
        return new Provenance(libraryVersion, dataFingerprint, trainingSamples, seed, value, cvMre, createdAt,
                devices);
    }

    /** The same provenance with another seed and configuration. */
    Provenance withSeedAndConfig(long value, Map<String, String> config) {
        return new Provenance(libraryVersion, dataFingerprint, trainingSamples, value, config, cvMre, createdAt,
                devices);
    }

    /**
     * The provenance of a copy adapted or calibrated on {@code n} more measurements: {@code key} counts them in the
     * configuration, and the measured devices join {@link #devices()}.
     */
    Provenance adapted(String key, int n, List<String> moreDevices) {
        return adapted(key, n, moreDevices, List.of(), List.of());
    }

    /**
     * {@link #adapted(String, int, List)} of a calibration, {@code executionDevices} the devices of its runs that
     * refit the shared execution model, recording the figures of its {@code described} devices
     * ({@link #calibrationDeviceFigures}; a device calibrated on again takes its latest figures).
     */
    Provenance adapted(String key, int n, List<String> moreDevices, List<String> executionDevices,
            List<org.scaledl.workload.Device> described) {
        Map<String, String> c = new TreeMap<>(config);
        if (!described.isEmpty()) {
            Map<String, String> figures = new TreeMap<>(calibrationDeviceFigures());
            described.forEach(d -> figures.put(d.name(), figuresDigest(d)));
            c.put(CALIBRATION_DEVICE_FIGURES, String.join(DEVICE_SEPARATOR, figures.entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()).toList()));
        }
        c.merge(key, Integer.toString(n), (a, b) -> Integer.toString(Integer.parseInt(a) + Integer.parseInt(b)));
        if (key.equals(CALIBRATION_RUNS) && !moreDevices.isEmpty()) {
            java.util.SortedSet<String> exec = new java.util.TreeSet<>(executionCalibrationDevices());
            java.util.SortedSet<String> cal = new java.util.TreeSet<>(calibrationDevices());
            cal.addAll(moreDevices);
            c.put(CALIBRATION_DEVICES, String.join(DEVICE_SEPARATOR, cal));
            exec.addAll(executionDevices);
            c.put(CALIBRATION_EXECUTION_DEVICES, String.join(DEVICE_SEPARATOR, exec));
        }
        java.util.SortedSet<String> d = new java.util.TreeSet<>(devices);
        d.addAll(moreDevices);
        return new Provenance(libraryVersion, dataFingerprint, trainingSamples, seed, c, cvMre, createdAt,
                List.copyOf(d));
    }
}
