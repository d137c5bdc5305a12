package org.scaledl.model;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.scaledl.Checks;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.Device;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * ScaleDL's runtime predictor, the one front door: a <b>layer cost</b> stage ({@link LayerCost#host()}: the
 * nonlinear layer-wise basis of {@link LayerBasis}, one regressor per operator family, fitted from whole-iteration
 * times; or {@link LayerCost#device}: boosted trees over device-relative features of operator measurements, for
 * any GPU described by the catalog), an optional <b>interaction</b> stage (a GNN over the layer DAG that corrects
 * what a sum of independent layers misses; {@link InteractionTrainer}, implemented in {@code scaledl-graph}), a
 * <b>communication</b> model (ring all-reduce, {@link Collectives}: fitted jointly with the host basis, or from
 * collective measurements for devices) and {@link Parallelism} (data, tensor, pipeline).
 *
 * <pre>{@code
 * RuntimePredictor p = RuntimePredictor.fit(dataset.samples());                      // host, defaults
 * RuntimePredictor g = RuntimePredictor.builder()
 *         .layerCost(LayerCost.device(kernels))                                     // GPUs
 *         .collectives(allReduceRuns)
 *         .interactions(new GnnInteractions())                                      // scaledl-graph
 *         .seed(7).build().fit(wholeModelRuns);
 * Prediction pr = p.predict(workload);
 * pr.millis(); pr.lowMillis(); pr.highMillis(); pr.breakdown(); pr.warnings();
 * p.save(Path.of("model.sdl"));  RuntimePredictor.load(Path.of("model.sdl"));
 * }</pre>
 *
 * <p><b>Domain.</b> The predictor keeps what its training data covered ({@link #domain()}); every prediction checks
 * the workload against it and carries {@linkplain Prediction#warnings() warnings} (with the share of the predicted
 * time each concerns), and its interval widens with the distance outside the domain. A workload on a device the
 * predictor cannot predict, with a parallelism its stage does not model, or on a graph with unresolved layers
 * (unless {@link #allowingPartialGraphs()}) is refused with an {@link IllegalArgumentException} naming both.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class RuntimePredictor implements RuntimeModel {
    /**
     * How much each unit of distance outside the training domain ({@link Domain.Check#distance()}: a doubling beyond
     * a setting's range, or the whole prediction resting on unseen families) widens the interval, in log-ratio on
     * each side: a batch 16 times beyond the largest trained adds {@code ±4 · 0.15}, a factor 1.8 either way.
     */
    static final double WIDEN = 0.15;

    private final String name;
    private final LayerStage stage;
    private final InteractionModel interactions;
    private final double logLow;
    private final double logHigh;
    private final Domain domain;
    private final Provenance provenance;
    private final boolean allowPartial;
    /** The same predictor without its interaction stage (itself when it has none). */
    private final RuntimePredictor layerwise;

    RuntimePredictor(String name, LayerStage stage, InteractionModel interactions, double logLow, double logHigh,
            Domain domain, Provenance provenance, boolean allowPartial) {
        this.name = Objects.requireNonNull(name);
        this.stage = Objects.requireNonNull(stage);
        this.interactions = interactions;
        this.logLow = logLow;
        this.logHigh = logHigh;
        this.domain = Objects.requireNonNull(domain);
        this.provenance = Objects.requireNonNull(provenance);
        this.allowPartial = allowPartial;
        this.layerwise = interactions == null ? this
                : new RuntimePredictor(name, stage, null, logLow, logHigh, domain, provenance, allowPartial);
    }

    /**
     * Where a fitted predictor came from.
     *
     * @param libraryVersion  scaledl version that fitted it
     * @param dataFingerprint SHA-256 of the training samples (workload, configuration and measured time, in order)
     * @param trainingSamples number of training samples
     * @param seed            configured seed
     * @param config          the trainer's configuration, as text
     * @param cvMre           out-of-group MRE of the chosen shrinkage inside the training data (NaN if not
     *                        cross-validated)
     * @param createdAt       fitting time (UTC, ISO-8601)
     * @param devices         names of the devices the training workloads (or operator measurements) carried,
     *                        sorted; empty when they carried none (host measurements without a machine description)
     */
    public record Provenance(String libraryVersion, String dataFingerprint, int trainingSamples, long seed,
            Map<String, String> config, double cvMre, String createdAt, List<String> devices) {
        /** Copies. */
        public Provenance {
            config = Map.copyOf(config);
            devices = List.copyOf(devices);
        }
    }

    /** Starts a configuration. */
    public static Builder builder() {
        return new Builder();
    }

    /** Fits the host model with the default configuration. */
    public static RuntimePredictor fit(List<Sample> samples) {
        return builder().build().fit(samples);
    }

    @Override
    public String name() {
        return name;
    }

    /** Where this predictor came from. */
    public Provenance provenance() {
        return provenance;
    }

    /** What its training data covered. */
    public Domain domain() {
        return domain;
    }

    /** {@code host} or {@code device}: which layer cost model it uses. */
    public String layerCostKind() {
        return stage.kind();
    }

    /** The fitted coefficients of the host basis, one per {@link LayerBasis#columnNames()} entry (a copy). */
    public double[] coefficients() {
        return host().coefficients();
    }

    /** The host basis's shrinkage strength (chosen or configured). */
    public double shrinkage() {
        return host().shrinkage();
    }

    private HostLayerModel host() {
        if (stage instanceof HostStage h && h.machines().size() == 1) {
            return h.machines().values().iterator().next();
        }
        throw new IllegalStateException(stage instanceof HostStage ? "this predictor has one basis per machine "
                + ((HostStage) stage).machines().keySet() : "this predictor uses the device layer model, which has no "
                + "basis coefficients");
    }

    /** The CPU machines a host predictor predicts (fitted and calibrated), sorted; empty for a device predictor. */
    public List<String> machines() {
        return stage instanceof HostStage h ? h.devices() : List.of();
    }

    /** The device layer cost model, for scoring single operators; empty for the host basis. */
    public Optional<DeviceLayerModel> deviceLayerModel() {
        return stage instanceof DeviceStage d ? Optional.of(d.layers()) : Optional.empty();
    }

    /** The interaction stage, if fitted. */
    public Optional<InteractionModel> interactions() {
        return Optional.ofNullable(interactions);
    }

    /** This predictor without its interaction stage (itself when it has none). */
    public RuntimePredictor layerwise() {
        return layerwise;
    }

    /**
     * A copy that predicts graphs with unresolved layers or unsupported operators instead of refusing them; the
     * predictions then carry a {@link PredictionWarning.Kind#PARTIAL_GRAPH} warning with the share concerned.
     */
    public RuntimePredictor allowingPartialGraphs() {
        return allowPartial ? this : new RuntimePredictor(name, stage, interactions, logLow, logHigh, domain,
                provenance, true);
    }

    LayerStage stage() {
        return stage;
    }

    /** The lower and upper log-ratio quantiles of the prediction interval. */
    double[] intervalLogRatios() {
        return new double[] {logLow, logHigh};
    }

    /**
     * Saves to a file in the versioned, checksummed JSON format of {@link ModelFile} (written atomically; readable by
     * the group unless the umask says otherwise).
     *
     * @throws java.io.UncheckedIOException if the file cannot be written
     */
    public void save(Path file) {
        ModelFile.write(this, file);
    }

    /** The saved form, as bytes ({@link #load(byte[])} reads it). */
    public byte[] toBytes() {
        return ModelFile.bytes(this);
    }

    /**
     * Loads a saved predictor of any format this library wrote (version-1 host, GNN and device model files included);
     * predictions are bit-identical to the saved one's.
     *
     * @throws org.scaledl.InvalidInputException for a truncated, tampered, foreign or newer-format file
     */
    public static RuntimePredictor load(Path file) {
        return ModelFile.read(file);
    }

    /**
     * Loads a saved predictor from a stream (read to its end, not closed).
     *
     * @param source what to call the stream in error messages
     * @throws org.scaledl.InvalidInputException for bad content
     */
    public static RuntimePredictor load(InputStream in, String source) {
        return ModelFile.read(in, source);
    }

    /**
     * Loads a saved predictor from bytes.
     *
     * @throws org.scaledl.InvalidInputException for bad content
     */
    public static RuntimePredictor load(byte[] bytes) {
        return ModelFile.read(bytes, "bytes");
    }

    /** Refuses what the stage cannot predict: another device, a parallelism it does not model, a partial graph. */
    private void check(Workload w) {
        String device = w.device().map(Device::name).orElse(null);
        if (stage instanceof HostStage h) {
            h.machineOf(w);
            if (!w.parallelism().isDataOnly()) {
                throw new IllegalArgumentException("the host layer model predicts data-parallel jobs only; the "
                        + "workload is " + w.parallelism());
            }
        } else if (device == null || !w.device().get().isGpu()) {
            throw new IllegalArgumentException("a device predictor needs a workload on a GPU: " + w);
        }
        if (!allowPartial && !w.graph().coverage().isComplete()) {
            throw new IllegalArgumentException("graph " + w.graph().name() + " is only partly resolved ("
                    + w.graph().coverage().summary() + "); predict it anyway with allowingPartialGraphs() "
                    + "(CLI --allow-partial)");
        }
    }

    /**
     * The 90 % interval's log-ratio ends from errors {@code log(predicted / measured)}: a measurement is the prediction
     * divided by the error, so the low end comes from the errors' upper quantile and vice versa; {@code [0, 0]}
     * without errors.
     */
    static double[] interval(List<Double> logErrors) {
        if (logErrors.isEmpty()) {
            return new double[2];
        }
        double[] sorted = logErrors.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return new double[] {Math.min(0, -Quantiles.of(sorted, 0.95)), Math.max(0, -Quantiles.of(sorted, 0.05))};
    }

    /** The predicted time in ms, without interval, breakdown or warnings (the fast path). */
    public double predictMillis(Workload w) {
        check(w);
        double base = stage.predictMillis(w);
        return interactions == null ? base : base * interactions.factor(w, layerwise, base);
    }

    @Override
    public Prediction predict(Workload w) {
        check(w);
        Prediction point = predictPoint(w);
        Domain.Check c = domain.check(w, point);
        double ms = point.millis();
        return new Prediction(ms, ms * Math.exp(logLow - WIDEN * c.distance()),
                ms * Math.exp(logHigh + WIDEN * c.distance()), point.breakdown(), c.warnings());
    }

    /** The prediction with its breakdown, corrected by the interaction stage, without interval or warnings. */
    private Prediction predictPoint(Workload w) {
        Prediction base = stage.predict(w);
        double f = interactions == null ? 1 : interactions.factor(w, layerwise, base.millis());
        List<Prediction.Contribution> parts = base.breakdown();
        if (f != 1) {
            List<Prediction.Contribution> scaled = new ArrayList<>(parts.size());
            for (Prediction.Contribution c : parts) {
                scaled.add(c.scaled(f));
            }
            parts = scaled;
        }
        double ms = base.millis() * f;
        return new Prediction(ms, ms, ms, parts);
    }

    /**
     * Predicts many workloads, in order: each is checked and refused as {@link #predict} would, and each prediction
     * has its interval and warnings but <em>no breakdown</em> (the fast path of a scheduler scoring candidates). The
     * checks of a graph at a batch (operators, families, layer features, coverage) are computed once and reused for
     * its other settings, with the shares of the first workload of that graph and batch.
     */
    public List<Prediction> predictAll(Iterable<Workload> workloads) {
        List<Prediction> out = new ArrayList<>();
        for (Workload w : workloads) {
            out.add(predictScored(w));
        }
        return out;
    }

    /** A prediction without breakdown, its graph checks cached (see {@link #predictAll}). */
    public Prediction predictScored(Workload w) {
        check(w);
        double base = stage.predictMillis(w);
        double ms = interactions == null ? base : base * interactions.factor(w, layerwise, base);
        CheckKey key = new CheckKey(w.batch(), w.phase(), w.device().map(Device::name).orElse(""),
                w.parallelism().tensor(), w.parallelism().pipeline());
        Map<CheckKey, GraphChecks> perGraph = w.graph().memo(checkToken,
                g -> new java.util.concurrent.ConcurrentHashMap<>());
        GraphChecks gc = perGraph.get(key);
        if (gc == null) {
            Prediction full = predictPoint(w);
            gc = new GraphChecks(domain.graphCheck(w, full), Domain.shares(full));
            if (perGraph.size() >= 4096) {
                perGraph.clear();
            }
            perGraph.put(key, gc);
        }
        Domain.Check settings = domain.settingsCheck(w, gc.shares());
        double d = settings.distance() + gc.graph().distance();
        List<PredictionWarning> warnings = settings.warnings().isEmpty() ? gc.graph().warnings()
                : java.util.stream.Stream.concat(settings.warnings().stream(), gc.graph().warnings().stream())
                        .toList();
        return new Prediction(ms, ms * Math.exp(logLow - WIDEN * d), ms * Math.exp(logHigh + WIDEN * d), List.of(),
                warnings);
    }

    private record CheckKey(int batch, org.scaledl.workload.Phase phase, String device, int tensor, int pipeline) {
    }

    private record GraphChecks(Domain.Check graph, Domain.Shares shares) {
    }

    /** The key under which graphs keep this predictor's checks of them ({@link org.scaledl.graph.ModelGraph#memo}). */
    private final Object checkToken = new Object();

    /**
     * A copy adapted to a device from a few profiled operators: per device, family and pass, every layer prediction
     * is multiplied by the damped median ratio of measured to predicted time of that group
     * ({@link DeviceLayerModel#adapt}). Device predictors only.
     *
     * @throws IllegalStateException for a host predictor
     */
    public RuntimePredictor adapt(List<OpMeasurement> profiled) {
        DeviceStage d = deviceStage();
        Domain dom = domain.plus(new Domain.Collector().operators(profiled).build(domain.crossValidated()));
        return new RuntimePredictor(name, new DeviceStage(d.layers().adapt(profiled), d.communication()),
                interactions, logLow, logHigh, dom, adapted("adapted_kernels", profiled.size()), allowPartial);
    }

    /**
     * A copy calibrated on a few measured runs. A device predictor: shared per-phase factors and a damped factor per
     * GPU measured ({@link DeviceLayerModel#calibrate}; these replace the earlier calibration). A host predictor:
     * <b>few-shot machine adaptation</b>, every CPU machine the runs measure gets a damped correction of the fitted
     * machine that predicts them best ({@link HostStage}), so a machine the predictor has not seen becomes
     * predictable from a handful of its runs.
     *
     * @throws IllegalArgumentException for a run without a device of the predictor's kind
     */
    public RuntimePredictor calibrate(List<Sample> runs) {
        Domain dom = domain.plus(new Domain.Collector().samples(runs).build(domain.crossValidated()));
        LayerStage next = stage instanceof HostStage h ? h.calibrate(runs)
                : new DeviceStage(deviceStage().layers().calibrate(runs), deviceStage().communication());
        Provenance p = adapted("calibration_runs", runs.size());
        List<String> devices = new ArrayList<>(p.devices());
        runs.forEach(r -> r.workload().device().map(Device::name).filter(n -> !devices.contains(n))
                .ifPresent(devices::add));
        java.util.Collections.sort(devices);
        Provenance withDevices = new Provenance(p.libraryVersion(), p.dataFingerprint(), p.trainingSamples(), p.seed(),
                p.config(), p.cvMre(), p.createdAt(), devices);
        return new RuntimePredictor(name, next, interactions, logLow, logHigh, dom, withDevices, allowPartial);
    }

    private DeviceStage deviceStage() {
        if (stage instanceof DeviceStage d) {
            return d;
        }
        throw new IllegalStateException("adapting to profiled operators needs a device predictor");
    }

    private Provenance adapted(String key, int n) {
        Map<String, String> config = new TreeMap<>(provenance.config());
        config.merge(key, Integer.toString(n), (a, b) -> Integer.toString(Integer.parseInt(a) + Integer.parseInt(b)));
        return new Provenance(provenance.libraryVersion(), provenance.dataFingerprint(), provenance.trainingSamples(),
                provenance.seed(), config, provenance.cvMre(), provenance.createdAt(), provenance.devices());
    }

    @Override
    public String toString() {
        return "RuntimePredictor[" + name + ", " + stage.kind() + (interactions == null ? ""
                : " + " + interactions.describe()) + ", " + provenance.trainingSamples() + " samples]";
    }

    /** Configures a {@link Trainer}. */
    public static final class Builder {
        private String name = "scaledl";
        private Double shrinkage;
        private String groupTag = "family";
        private long seed = 0;
        private double layerShare = 0;
        private LayerCost layerCost = LayerCost.host();
        private InteractionTrainer interactions;
        private List<CollectiveMeasurement> collectives = List.of();
        private List<OpMeasurement> profiled = List.of();

        private Builder() {
        }

        /**
         * How much the measured per-module forward times of the samples ({@link Sample#layerMillis()}) weigh in the
         * host fit, relative to the whole-iteration times (default 0: on the bundled data, adding them at weight 0.1
         * or 0.5 made held-out errors worse, 19.1 % and 19.2 % MRE against 18.5 % without).
         */
        public Builder layerTimeWeight(double value) {
            Checks.argument(value >= 0 && Double.isFinite(value), "weight must be >= 0: %s", value);
            this.layerShare = value;
            return this;
        }

        /** The method name (default {@code scaledl}). */
        public Builder name(String value) {
            this.name = Objects.requireNonNull(value);
            return this;
        }

        /** Fixes the host basis's shrinkage strength instead of choosing it by cross-validation. */
        public Builder shrinkage(double value) {
            Checks.argument(value >= 0 && Double.isFinite(value), "shrinkage must be >= 0: %s", value);
            this.shrinkage = value;
            return this;
        }

        /** The workload tag that defines cross-validation groups (default {@code family}). */
        public Builder groupTag(String value) {
            this.groupTag = Objects.requireNonNull(value);
            return this;
        }

        /** The seed, recorded with the model and used by any stage that samples (the interaction stage). */
        public Builder seed(long value) {
            this.seed = value;
            return this;
        }

        /** The layer cost model (default {@link LayerCost#host()}). */
        public Builder layerCost(LayerCost value) {
            this.layerCost = Objects.requireNonNull(value);
            return this;
        }

        /** An interaction stage to fit on top of the layer-wise prediction (default: none). */
        public Builder interactions(InteractionTrainer value) {
            this.interactions = Objects.requireNonNull(value);
            return this;
        }

        /** Measured collectives to fit the communication model of a device predictor on. */
        public Builder collectives(List<CollectiveMeasurement> value) {
            this.collectives = List.copyOf(value);
            return this;
        }

        /** Operators profiled on the target devices, to adapt a device predictor to ({@link #adapt}). */
        public Builder adaptTo(List<OpMeasurement> value) {
            this.profiled = List.copyOf(value);
            return this;
        }

        /** The configuration. */
        public Trainer build() {
            return new Trainer(this);
        }
    }

    /** An immutable configuration that fits {@link RuntimePredictor}s. */
    public static final class Trainer implements RuntimeTrainer {
        private final String name;
        private final Optional<Double> shrinkage;
        private final String groupTag;
        private final long seed;
        private final double layerShare;
        private final LayerCost layerCost;
        private final InteractionTrainer interactions;
        private final List<CollectiveMeasurement> collectives;
        private final List<OpMeasurement> profiled;

        private Trainer(Builder b) {
            this.layerShare = b.layerShare;
            this.name = b.name;
            this.shrinkage = Optional.ofNullable(b.shrinkage);
            this.groupTag = b.groupTag;
            this.seed = b.seed;
            this.layerCost = b.layerCost;
            this.interactions = b.interactions;
            this.collectives = b.collectives;
            this.profiled = b.profiled;
        }

        /**
         * The host shrinkage a full fit chose (with several machines, the median of theirs), else the configured one
         * (or the default): what the out-of-group fits for an interaction stage hold fixed.
         */
        private double chosenShrinkage(RuntimePredictor layer) {
            if (layer.stage instanceof HostStage h && !h.machines().isEmpty()) {
                double[] s = h.machines().values().stream().mapToDouble(HostLayerModel::shrinkage).sorted().toArray();
                return Quantiles.median(s);
            }
            return shrinkage.orElse(HostLayerModel.DEFAULT_SHRINKAGE);
        }

        private Trainer(Trainer t, Optional<Double> shrinkage, InteractionTrainer interactions) {
            this.layerShare = t.layerShare;
            this.name = t.name;
            this.shrinkage = shrinkage;
            this.groupTag = t.groupTag;
            this.seed = t.seed;
            this.layerCost = t.layerCost;
            this.interactions = interactions;
            this.collectives = t.collectives;
            this.profiled = t.profiled;
        }

        @Override
        public String name() {
            return name;
        }

        /** The design row of a workload for the host basis (see {@link LayerBasis#row}). */
        public double[] designRow(Workload w) {
            return LayerBasis.standard().row(w);
        }

        /** The seed. */
        public long seed() {
            return seed;
        }

        /**
         * Fits on samples: whole-iteration times (host: at least 2; device: the runs to calibrate on, possibly
         * none).
         *
         * @throws IllegalArgumentException with too few samples
         */
        @Override
        public RuntimePredictor fit(List<Sample> samples) {
            Map<String, String> config = new TreeMap<>();
            config.put("name", name);
            config.put("group_tag", groupTag);
            config.put("layer_cost", layerCost.kind());
            RuntimePredictor layer;
            if (layerCost.measurements().isEmpty()) {
                Checks.argument(samples.size() >= 2,
                        "need at least 2 samples to fit a runtime model, got %s", samples.size());
                config.put("shrinkage", shrinkage.map(String::valueOf).orElse("auto"));
                config.put("layer_time_weight", String.valueOf(layerShare));
                // One basis per machine: samples grouped by their device ("" without one), in first-seen order.
                Map<String, List<Sample>> byMachine = new java.util.LinkedHashMap<>();
                for (Sample sm : samples) {
                    Optional<Device> d = sm.workload().device();
                    Checks.argument(d.isEmpty() || !d.get().isGpu(), "sample on GPU %s: fit a device "
                            + "predictor (LayerCost.device) for GPUs", d.map(Device::name).orElse(""));
                    byMachine.computeIfAbsent(d.map(Device::name).orElse(""), k -> new ArrayList<>()).add(sm);
                }
                Map<String, HostLayerModel> machines = new java.util.LinkedHashMap<>();
                List<Double> errors = new ArrayList<>();
                double absSum = 0;
                int cvCount = 0;
                boolean crossValidated = true;
                for (Map.Entry<String, List<Sample>> e : byMachine.entrySet()) {
                    Checks.argument(e.getValue().size() >= 2, "need at least 2 samples of machine '%s' "
                            + "to fit it, got %s", e.getKey(), e.getValue().size());
                    HostLayerModel.Fit f = HostLayerModel.fit(e.getValue(), shrinkage, groupTag, layerShare);
                    machines.put(e.getKey(), f.model());
                    for (double x : f.logErrors()) {
                        errors.add(x);
                        absSum += Math.abs(Math.expm1(x));
                    }
                    cvCount += f.logErrors().length;
                    crossValidated &= !Double.isNaN(f.cvMre());
                }
                double[] interval = interval(errors);
                double lo = interval[0];
                double hi = interval[1];
                double cvMre = crossValidated ? absSum / cvCount : Double.NaN;
                List<String> devices = byMachine.keySet().stream().filter(k -> !k.isEmpty()).sorted().toList();
                Domain domain = new Domain.Collector().samples(samples).build(crossValidated);
                if (byMachine.size() > 1) {
                    config.put("machines", String.join(", ", byMachine.keySet()));
                }
                layer = new RuntimePredictor(name, new HostStage(machines, Map.of()), null, lo, hi, domain,
                        provenance(samples, config, cvMre, devices), false);
            } else {
                List<OpMeasurement> ops = layerCost.measurements().get();
                DeviceLayerModel m = DeviceLayerModel.fit(ops);
                if (!profiled.isEmpty()) {
                    m = m.adapt(profiled);
                    config.put("adapted_kernels", Integer.toString(profiled.size()));
                }
                m = m.calibrate(samples);
                Optional<CommunicationModel> comm = collectives.isEmpty() ? Optional.empty()
                        : Optional.of(AllReduceModel.fit(collectives));
                config.put("collectives", Integer.toString(collectives.size()));
                // The interval: each run predicted with its GPU left out of the calibration, where runs cover at
                // least three GPUs; else the calibrated model's own errors on its runs.
                long gpus = samples.stream().map(sm -> DeviceLayerModel.deviceOf(sm.workload()).name()).distinct()
                        .count();
                List<Double> errors = gpus >= 3 ? m.heldOutDeviceLogErrors(samples) : List.of();
                boolean crossValidated = !errors.isEmpty();
                if (!crossValidated) {
                    List<Double> own = new ArrayList<>();
                    for (Sample sm : samples) {
                        own.add(Math.log(m.predictMillis(sm.workload()) / sm.millis()));
                    }
                    errors = own;
                }
                double cvMre = crossValidated ? errors.stream().mapToDouble(x -> Math.abs(Math.expm1(x))).average()
                        .orElseThrow() : Double.NaN;
                double[] interval = interval(errors);
                Domain domain = new Domain.Collector().operators(ops).operators(profiled).samples(samples)
                        .build(crossValidated);
                layer = new RuntimePredictor(name, new DeviceStage(m, comm), null, interval[0], interval[1], domain,
                        provenance(samples, config, cvMre, m.devices()), false);
            }
            if (interactions == null) {
                return layer;
            }
            // Out-of-group targets come from the same layer cost configuration with the shrinkage the full fit chose
            // (held fixed: cross-validating it inside every fold costs five fits each). With another shrinkage the
            // network would learn the errors of another layer-wise model than the one it corrects.
            Trainer fixed = new Trainer(this, Optional.of(chosenShrinkage(layer)), null);
            InteractionModel im = interactions.fit(samples, layer, fixed::fit, groupTag);
            config.put("interactions", interactions.name());
            Provenance p = layer.provenance;
            Provenance withStage = new Provenance(p.libraryVersion(), p.dataFingerprint(), p.trainingSamples(), seed,
                    config, p.cvMre(), p.createdAt(), p.devices());
            return new RuntimePredictor(name, layer.stage, im, layer.logLow, layer.logHigh, layer.domain, withStage,
                    false);
        }

        private Provenance provenance(List<Sample> samples, Map<String, String> config, double cvMre,
                List<String> devices) {
            return new Provenance(ModelFile.LIBRARY_VERSION, fingerprint(samples), samples.size(), seed, config,
                    cvMre, java.time.Instant.now().toString(), devices);
        }
    }

    /**
     * The module path of an exported node name: scope segments joined with dots, where a segment that already
     * repeats its parent's path ({@code layer1.0} under {@code layer1}) replaces it. The last segment (the
     * operator) is dropped.
     */
    static String modulePath(String nodeName) {
        return HostLayerModel.modulePath(nodeName);
    }

    /** SHA-256 over each sample's workload description and measured time, in order. */
    static String fingerprint(List<Sample> samples) {
        StringBuilder text = new StringBuilder();
        for (Sample s : samples) {
            Workload w = s.workload();
            text.append(w.graph().name()).append('|').append(w.graph().size()).append('|').append(w.batch())
                    .append('|').append(w.phase()).append('|').append(w.worldSize()).append('|').append(w.threads())
                    .append('|').append(Double.doubleToLongBits(s.millis()));
            if (w.device().isPresent() || !w.parallelism().isDataOnly()) {
                text.append('|').append(w.device().map(Device::name).orElse("")).append('|')
                        .append(w.parallelism());
            }
            text.append('\n');
        }
        return ModelFile.sha256(text.toString());
    }
}
