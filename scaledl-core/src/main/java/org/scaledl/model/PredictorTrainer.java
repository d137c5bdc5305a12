package org.scaledl.model;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.scaledl.Checks;
import org.scaledl.Version;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.file.Envelope;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.Device;
import org.scaledl.workload.Folds;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * An immutable configuration that fits {@link RuntimePredictor}s (learner and learned are separate types): the layer
 * cost strategy with its options ({@link LayerCost}), an optional interaction stage, the cross-validation groups,
 * the name and the seed. Fits are deterministic for a fixed configuration and sample order.
 *
 * <pre>{@code
 * PredictorTrainer t = RuntimePredictor.builder().layerCost(LayerCost.host().withShrinkage(0.01)).seed(7).build();
 * RuntimePredictor p = t.fit(dataset.samples());
 * }</pre>
 *
 * <p>With an interaction stage, the trainer computes what it learns from: every sample's layer-wise prediction by
 * the layer stage fitted without the sample's group ({@link Folds#leaveOneGroupOut}), with the choices of the full
 * fit held fixed, and the per-layer times that fit predicts for the sample's graph
 * ({@link InteractionTrainer.Targets}).
 */
public final class PredictorTrainer implements RuntimeTrainer {
    private final String name;
    private final String groupTag;
    private final long seed;
    private final LayerCost layerCost;
    private final InteractionTrainer interactions;

    private PredictorTrainer(String name, String groupTag, long seed, LayerCost layerCost,
            InteractionTrainer interactions) {
        this.name = name;
        this.groupTag = groupTag;
        this.seed = seed;
        this.layerCost = layerCost;
        this.interactions = interactions;
    }

    @Override
    public String name() {
        return name;
    }

    /** The seed. */
    public long seed() {
        return seed;
    }

    /** The layer cost strategy. */
    public LayerCost layerCost() {
        return layerCost;
    }

    /**
     * Fits on samples: whole-iteration times (host: at least 2; device: the runs to calibrate on, possibly none).
     *
     * @throws IllegalArgumentException with too few samples
     */
    @Override
    public RuntimePredictor fit(List<Sample> samples) {
        java.util.Objects.requireNonNull(samples, "samples").forEach(s -> java.util.Objects.requireNonNull(s,
                "a sample of samples"));
        return fit(samples, layerCost, interactions);
    }

    private RuntimePredictor fit(List<Sample> samples, LayerCost cost, InteractionTrainer stage) {
        Map<String, String> config = new TreeMap<>();
        config.put("name", name);
        config.put("group_tag", groupTag);
        config.put("layer_cost", cost.kind());
        LayerCost.Fitted f = cost.fit(samples, groupTag);
        config.putAll(f.config());
        double[] interval = org.scaledl.model.cost.Quantiles.interval(f.logErrors());
        Provenance prov = new Provenance(Version.get(), fingerprint(samples), samples.size(), seed, config, f.cvMre(),
                java.time.Instant.now().toString(), f.devices());
        RuntimePredictor layer = new RuntimePredictor(name, f.stage(), null, interval[0], interval[1], f.domain(),
                prov, false);
        if (stage == null) {
            return layer;
        }
        // the runs the layer stage left out are no more use to the interaction stage
        List<Sample> kept = without(samples, f.outliers());
        InteractionModel im = stage.fit(kept, outOfGroup(kept, cost.heldAt(f.stage()), layer));
        config.put("interactions", stage.name());
        return new RuntimePredictor(name, f.stage(), im, interval[0], interval[1], f.domain(),
                prov.withSeedAndConfig(seed, config), false);
    }

    /**
     * Every sample's layer-wise prediction by the layer stage fitted without its group (all samples' fit when there
     * are fewer than two groups), and that fit's per-layer times of the sample's graph in the reference workload.
     */
    private InteractionTrainer.Targets outOfGroup(List<Sample> samples, LayerCost held, RuntimePredictor full) {
        double[] base = new double[samples.size()];
        List<double[]> refs = new ArrayList<>(java.util.Collections.nCopies(samples.size(), (double[]) null));
        List<Folds.Fold> folds = Folds.leaveOneGroupOut(samples, Folds.byTag(groupTag));
        if (folds.size() < 2) {
            RuntimePredictor p = fit(samples, held, null);
            Map<ModelGraph, Map<Optional<Device>, double[]>> cache = new IdentityHashMap<>();
            for (int i = 0; i < base.length; i++) {
                Workload w = samples.get(i).workload();
                base[i] = p.predictMillis(w);
                refs.set(i, reference(cache, full, w));
            }
        } else {
            for (Folds.Fold fold : folds) {
                RuntimePredictor p = fit(fold.train(samples), held, null);
                Map<ModelGraph, Map<Optional<Device>, double[]>> cache = new IdentityHashMap<>();
                for (int i : fold.test()) {
                    Workload w = samples.get(i).workload();
                    base[i] = p.predictMillis(w);
                    refs.set(i, reference(cache, p, w));
                }
            }
        }
        for (int i = 0; i < base.length; i++) {
            base[i] = Math.max(base[i], 1e-6);
        }
        return new InteractionTrainer.Targets(base, refs, groupTag);
    }

    /** The samples that are not among {@code left} (by identity), in order. */
    static List<Sample> without(List<Sample> samples, List<Sample> left) {
        if (left.isEmpty()) {
            return samples;
        }
        java.util.Set<Sample> out = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        out.addAll(left);
        return samples.stream().filter(s -> !out.contains(s)).toList();
    }

    private static double[] reference(Map<ModelGraph, Map<Optional<Device>, double[]>> cache, RuntimePredictor p,
            Workload w) {
        return cache.computeIfAbsent(w.graph(), g -> new HashMap<>()).computeIfAbsent(w.device(),
                d -> p.referenceLayerMillis(w));
    }

    /** SHA-256 over each sample's {@link Sample#key()}, in order. */
    static String fingerprint(List<Sample> samples) {
        StringBuilder text = new StringBuilder();
        for (Sample s : samples) {
            text.append(s.key()).append('\n');
        }
        return Envelope.sha256(text.toString());
    }

    /**
     * Configures a {@link PredictorTrainer}. The layer cost's own options are set on it ({@link LayerCost.Host},
     * {@link LayerCost.Device}); the shortcuts here ({@link #shrinkage}, {@link #collectives}, ...) set the same
     * options and are refused at {@link #build()} when they do not belong to the chosen layer cost.
     */
    public static final class Builder {
        private String name = "scaledl";
        private String groupTag = "family";
        private long seed = 0;
        private LayerCost layerCost = LayerCost.host();
        private InteractionTrainer interactions;
        private Double shrinkage;
        private Double layerTimeWeight;
        private List<CollectiveMeasurement> collectives;
        private List<OpMeasurement> profiled;

        Builder() {
        }

        /** The method name (default {@code scaledl}). */
        public Builder name(String value) {
            this.name = Objects.requireNonNull(value, "name");
            return this;
        }

        /** The workload tag that defines cross-validation groups (default {@code family}). */
        public Builder groupTag(String value) {
            this.groupTag = Objects.requireNonNull(value, "groupTag");
            return this;
        }

        /** The seed, recorded with the model and used by any stage that samples (the interaction stage). */
        public Builder seed(long value) {
            this.seed = value;
            return this;
        }

        /** The layer cost model and its options (default {@link LayerCost#host()}). */
        public Builder layerCost(LayerCost value) {
            this.layerCost = Objects.requireNonNull(value, "layerCost");
            return this;
        }

        /** An interaction stage to fit on top of the layer-wise prediction (default: none). */
        public Builder interactions(InteractionTrainer value) {
            this.interactions = Objects.requireNonNull(value, "interactions");
            return this;
        }

        /** Host option: {@link LayerCost.Host#withShrinkage}. */
        public Builder shrinkage(double value) {
            this.shrinkage = value;
            return this;
        }

        /** Host option: {@link LayerCost.Host#withLayerTimeWeight}. */
        public Builder layerTimeWeight(double value) {
            this.layerTimeWeight = value;
            return this;
        }

        /** Device option: {@link LayerCost.Device#withCollectives}. */
        public Builder collectives(List<CollectiveMeasurement> value) {
            this.collectives = List.copyOf(java.util.Objects.requireNonNull(value, "collectives"));
            return this;
        }

        /** Device option: {@link LayerCost.Device#withAdaptTo}. */
        public Builder adaptTo(List<OpMeasurement> value) {
            this.profiled = List.copyOf(value);
            return this;
        }

        /**
         * The configuration.
         *
         * @throws IllegalArgumentException for an option that does not belong to the chosen layer cost, naming it
         */
        public PredictorTrainer build() {
            LayerCost cost = layerCost;
            if (cost instanceof LayerCost.Host h) {
                refuse(collectives, "collectives", "LayerCost.device(...)");
                refuse(profiled, "adaptTo", "LayerCost.device(...)");
                if (shrinkage != null) {
                    h = h.withShrinkage(shrinkage);
                }
                if (layerTimeWeight != null) {
                    h = h.withLayerTimeWeight(layerTimeWeight);
                }
                cost = h;
            } else if (cost instanceof LayerCost.Device d) {
                refuse(shrinkage, "shrinkage", "LayerCost.host()");
                refuse(layerTimeWeight, "layerTimeWeight", "LayerCost.host()");
                if (collectives != null) {
                    d = d.withCollectives(collectives);
                }
                if (profiled != null) {
                    d = d.withAdaptTo(profiled);
                }
                cost = d;
            }
            return new PredictorTrainer(name, groupTag, seed, cost, interactions);
        }

        private void refuse(Object option, String what, String owner) {
            Checks.argument(option == null, "%s(...) is an option of %s; this builder's layer cost is %s", what, owner,
                    layerCost);
        }
    }
}
