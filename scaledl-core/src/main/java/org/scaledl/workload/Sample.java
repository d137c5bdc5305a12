package org.scaledl.workload;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.scaledl.Checks;

/**
 * A measured workload: its iteration time in milliseconds and, optionally, measured forward times of some layers
 * (keyed by a module path that prefixes node names, as in {@code layers.csv}).
 *
 * @param workload    what ran
 * @param millis      measured time of one iteration (finite, positive)
 * @param layerMillis measured per-module forward times (each finite and positive), possibly empty
 */
public record Sample(Workload workload, double millis, Map<String, Double> layerMillis) {

    /** Validates and copies. */
    public Sample {
        Objects.requireNonNull(workload, "workload");
        Checks.argument(Double.isFinite(millis) && millis > 0,
                "measured time must be finite and positive: %s", millis);
        Objects.requireNonNull(layerMillis, "layerMillis");
        for (Map.Entry<String, Double> e : layerMillis.entrySet()) {
            Objects.requireNonNull(e.getKey(), "layerMillis key");
            // one layer's NaN or 0 would pass into the fit's layer targets and make every prediction 0 ms
            Checks.argument(e.getValue() != null && Double.isFinite(e.getValue()) && e.getValue() > 0,
                    "measured time of layer '%s' must be finite and positive: %s", e.getKey(), e.getValue());
        }
        layerMillis = Collections.unmodifiableMap(new LinkedHashMap<>(layerMillis));
    }

    /** A sample without per-layer times. */
    public static Sample of(Workload workload, double millis) {
        return new Sample(workload, millis, Map.of());
    }

    /**
     * The run in one line: its graph's name and size, batch, phase, world size, threads and measured time (the
     * time's exact bits), where it has a device or a model-parallel layout, those, and on a GPU its job's every
     * setting ({@link Workload#identity()}: precision, recomputation, topology...). Two samples of one key are the
     * same measurement (a fitted predictor's data fingerprint is a hash of its samples' keys); a CPU run's settings
     * beyond these are its dataset's, one machine's.
     */
    public String key() {
        Workload w = workload;
        StringBuilder text = new StringBuilder();
        text.append(w.graph().name()).append('|').append(w.graph().size()).append('|').append(w.batch())
                .append('|').append(w.phase()).append('|').append(w.worldSize()).append('|').append(w.threads())
                .append('|').append(Double.doubleToLongBits(millis));
        if (w.device().isPresent() || !w.parallelism().isDataOnly()) {
            text.append('|').append(w.device().map(Device::name).orElse("")).append('|').append(w.parallelism());
        }
        if (w.device().filter(Device::isGpu).isPresent()) {
            text.append('|').append(w.identity());
        }
        return text.toString();
    }
}
