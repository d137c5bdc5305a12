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
 * @param layerMillis measured per-module forward times, possibly empty
 */
public record Sample(Workload workload, double millis, Map<String, Double> layerMillis) {

    /** Validates and copies. */
    public Sample {
        Objects.requireNonNull(workload, "workload");
        Checks.argument(Double.isFinite(millis) && millis > 0,
                "measured time must be finite and positive: %s", millis);
        layerMillis = Collections.unmodifiableMap(new LinkedHashMap<>(layerMillis));
    }

    /** A sample without per-layer times. */
    public static Sample of(Workload workload, double millis) {
        return new Sample(workload, millis, Map.of());
    }
}
