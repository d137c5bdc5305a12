package org.scaledl.models;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import org.scaledl.model.RuntimePredictor;

/**
 * Predictors fitted on the datasets bundled with scaledl, shipped in this jar so that a Maven user can predict
 * without cloning the repository:
 *
 * <ul>
 *   <li>{@code cpu-ddp}: the AMD EPYC 2-core VM ({@code datasets/cpu-ddp}, 13 models, 462 runs)</li>
 *   <li>{@code cpu-zoo}: the Intel Xeon 2-core VM with AVX-512 ({@code datasets/cpu-zoo}, 57 architectures,
 *       1,070 runs)</li>
 *   <li>{@code cpu-machines}: both machines in one predictor (a workload names its machine)</li>
 *   <li>{@code gpu}: the device predictor of every GPU the catalog describes ({@code datasets/gpu}: NeuSight's
 *       kernels and runs, DeepBench's kernels and all-reduces, vTrain's Megatron runs), in any precision, for
 *       imported graphs and configuration-built transformers, on one GPU or spread over a cluster</li>
 * </ul>
 *
 * <pre>{@code
 * RuntimePredictor p = BundledModels.load("cpu-zoo");
 * double ms = p.predict(Workload.builder(graph).batch(8).build()).millis();
 * }</pre>
 *
 * A predictor predicts the machine it was fitted on; for another machine, measure a few runs and
 * {@link RuntimePredictor#calibrate} it.
 */
public final class BundledModels {
    private static final List<String> NAMES = List.of("cpu-ddp", "cpu-zoo", "cpu-machines", "gpu");

    private BundledModels() {
    }

    /** The names {@link #load} accepts. */
    public static List<String> names() {
        return NAMES;
    }

    /**
     * Loads a bundled predictor, reading it from the jar at each call (about a quarter of a second for {@code gpu}):
     * keep the predictor, which is immutable and thread-safe.
     *
     * @throws IllegalArgumentException for an unknown name (the message lists the known ones)
     */
    public static RuntimePredictor load(String name) {
        if (name == null || !NAMES.contains(name)) {
            throw new IllegalArgumentException("no bundled model '" + name + "'"
                    + (name == null ? "" : org.scaledl.Suggestions.closest(name, NAMES).map(s -> "; did you mean '"
                            + s + "'?").orElse(""))
                    + " (known: " + String.join(", ", NAMES) + ")");
        }
        String resource = name + ".sdl";
        try (InputStream in = BundledModels.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("bundled model " + resource + " is missing from the jar");
            }
            // the jar's own resource, checked with its checksum when the jar was built (BundledModelsTest)
            return RuntimePredictor.loadTrusted(in.readAllBytes(), "classpath:org/scaledl/models/" + resource);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
