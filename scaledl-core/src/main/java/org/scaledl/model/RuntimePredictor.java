package org.scaledl.model;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.scaledl.graph.GraphCache;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.cost.LayerStage;
import org.scaledl.model.cost.StageCost;
import org.scaledl.workload.Device;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * ScaleDL's runtime predictor, the one front door: a <b>layer cost</b> stage ({@link LayerCost#host()}: the
 * nonlinear layer-wise basis, one regressor per operator family, fitted from whole-iteration times; or
 * {@link LayerCost#device}: boosted trees over device-relative features of operator measurements, for any GPU
 * described by the catalog, with the collectives of data, tensor and pipeline parallelism), and an optional
 * <b>interaction</b> stage (a GNN over the layer DAG that corrects what a sum of independent layers misses;
 * {@link InteractionTrainer}, implemented in {@code scaledl-graph}). The predictor keeps what the stages share: the
 * prediction interval, the training {@link Domain} and the {@link Provenance}.
 *
 * <pre>{@code
 * RuntimePredictor p = RuntimePredictor.fit(dataset.samples());                      // host, defaults
 * RuntimePredictor g = RuntimePredictor.builder()
 *         .layerCost(LayerCost.device(kernels).withCollectives(allReduceRuns))       // GPUs
 *         .seed(7).build().fit(wholeModelRuns);
 * Prediction pr = p.predict(workload);
 * pr.millis(); pr.lowMillis(); pr.highMillis(); pr.breakdown(); pr.warnings();
 * p.save(Path.of("model.sdl"));  RuntimePredictor.load(Path.of("model.sdl"));
 * }</pre>
 *
 * <p><b>Domain.</b> Every prediction checks the workload against what the training data covered and carries
 * {@linkplain Prediction#warnings() warnings} (with the share of the predicted time each concerns); its interval
 * widens with the distance outside the domain. A workload on a machine or device the predictor cannot predict, with
 * a parallelism its stage does not model, or on a graph with unresolved layers (unless
 * {@link #allowingPartialGraphs()}) is refused with an {@link IllegalArgumentException} naming both.
 *
 * <p>Instances are immutable and thread-safe; the same question gets the same answer whatever was asked before.
 */
public final class RuntimePredictor implements RuntimeModel {
    /**
     * The most times slower or faster than predicted a calibration run may measure ({@link #calibrate}): far beyond a
     * model's error and the few times a machine differs from the one fitted (what calibration is for); a time in
     * another unit is 1,000 times off.
     */
    public static final double MAX_CALIBRATION_RATIO = LayerStage.MAX_MEASURED_RATIO;

    /**
     * How much each unit of distance outside the training domain ({@link Domain.Check#distance()}: a doubling beyond
     * a setting's range, or the whole prediction resting on unseen families) widens the interval, in log-ratio on
     * each side: a batch 16 times beyond the largest trained adds {@code ±4 · 0.15}, a factor 1.8 either way.
     */
    static final double WIDEN = 0.15;

    /**
     * How close to the GPU's memory a training job whose recomputation the predictor chose may come before the choice
     * counts as uncertain ({@link PredictionWarning.Kind#NEAR_MEMORY_LIMIT}): 5 % of its capacity. Chosen by looking
     * at the published cluster runs with each model family held out: the 41 whose chosen recomputation left less than
     * this were predicted with twice the others' error, in either direction, and too few of them fell in the 90 %
     * interval (docs/results.md gives the figures).
     */
    public static final double MEMORY_EDGE = 0.05;

    /**
     * The domain distance such a job adds to its interval ({@link #WIDEN} each side per unit): the least of 0.5, 1,
     * 1.5… that brings those same 41 runs' held-out coverage to the interval's 90 % (tuned on them, so their coverage
     * is in-sample).
     */
    static final double MEMORY_EDGE_DISTANCE = 0.5;

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
    /** The interaction stage prepared per graph and machine (everything its value depends on). */
    private final GraphCache<Optional<Device>, InteractionModel.Prepared> prepared = new GraphCache<>(64);

    RuntimePredictor(String name, LayerStage stage, InteractionModel interactions, double logLow, double logHigh,
            Domain domain, Provenance provenance, boolean allowPartial) {
        this.name = Objects.requireNonNull(name, "name");
        this.stage = Objects.requireNonNull(stage, "stage");
        this.interactions = interactions;
        this.logLow = logLow;
        this.logHigh = logHigh;
        this.domain = Objects.requireNonNull(domain, "domain");
        this.provenance = Objects.requireNonNull(provenance, "provenance");
        this.allowPartial = allowPartial;
        this.layerwise = interactions == null ? this
                : new RuntimePredictor(name, stage, null, logLow, logHigh, domain, provenance, allowPartial);
    }

    /** Starts a configuration. */
    public static PredictorTrainer.Builder builder() {
        return new PredictorTrainer.Builder();
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

    /** The CPU machines or GPUs it knows from measurements (fitted and calibrated), sorted. */
    public List<String> machines() {
        return List.copyOf(stage.devices());
    }

    /**
     * What it knows of one of its {@link #machines()}: a CPU machine's cores, vector width, caches, clock and memory
     * bandwidth as the runs it was fitted or calibrated on described it (empty for GPUs, whose catalog describes them,
     * and for machines known by name only).
     */
    public Optional<org.scaledl.workload.Device> machine(String name) {
        return stage.description(java.util.Objects.requireNonNull(name, "name"));
    }

    /** The cost of single operators, for scoring them: the device stage's layer model; empty for the host basis. */
    public Optional<org.scaledl.model.cost.OperatorCost> operators() {
        return stage.operators();
    }

    /** The device layer model (its corrections and factors), for reports and tests; empty for the host basis. */
    public Optional<org.scaledl.model.device.DeviceLayerModel> deviceLayerModel() {
        return stage.operators().filter(org.scaledl.model.device.DeviceLayerModel.class::isInstance)
                .map(org.scaledl.model.device.DeviceLayerModel.class::cast);
    }

    /**
     * Whether this predictor models jobs spread over GPUs with tensor, pipeline, context and expert parallelism
     * (a device predictor); a host predictor models data-parallel CPU jobs only.
     */
    public boolean modelsClusters() {
        return stage.modelsClusters();
    }

    /**
     * The fitted execution model of configuration-built transformers on GPUs (the coefficients of the named
     * {@link org.scaledl.model.exec.ExecutionTerm}s, the intervals, the calibration's level prior), where this
     * predictor has one: a device predictor fitted or calibrated on transformer runs.
     */
    public Optional<org.scaledl.model.exec.MegatronModel> executionModel() {
        return stage instanceof org.scaledl.model.device.DeviceStage d ? d.megatron() : Optional.empty();
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

    /**
     * The job as this predictor runs it: where it leaves the recomputation to the predictor ({@code auto}), the
     * recomputation chosen (for a transformer on a device model, the least that fits the device's memory; none for
     * an imported graph or a host, which this library runs without recomputation); the job itself otherwise.
     */
    public Workload resolved(Workload w) {
        java.util.Objects.requireNonNull(w, "w");
        Workload r = stage.resolve(w);
        return r.recompute() == org.scaledl.workload.Recompute.AUTO
                ? r.toBuilder().recompute(org.scaledl.workload.Recompute.NONE).build() : r;
    }

    LayerStage stage() {
        return stage;
    }

    /**
     * Whether a training job recomputes all it can already, so that more recomputation is no way to fit it: every
     * layer in full, or what {@code auto} chose where nothing fits (the least memory it reaches).
     */
    private boolean recomputesAllItCan(Workload w) {
        Workload r = resolved(w);
        return r.recompute() == org.scaledl.workload.Recompute.FULL && r.recomputeLayers() == 0
                || w.recompute() == org.scaledl.workload.Recompute.AUTO
                && r.recompute() != org.scaledl.workload.Recompute.NONE;
    }

    boolean allowsPartialGraphs() {
        return allowPartial;
    }

    /** The lower and upper log-ratio quantiles of the prediction interval. */
    double[] intervalLogRatios() {
        return new double[] {logLow, logHigh};
    }

    /**
     * The design row of a workload for choosing what to profile ({@code ProfilingPlan}): the columns this
     * predictor's stage estimates (the host basis; for a device predictor, its per-family layer times on the
     * workload's GPU).
     */
    public double[] designRow(Workload w) {
        java.util.Objects.requireNonNull(w, "w");
        return stage.designRow(w);
    }

    /**
     * Saves to a file in the versioned, checksummed JSON format of {@link ModelFile} (written atomically; readable by
     * the group unless the umask says otherwise; nothing but a regular file is ever replaced). Folders missing on
     * the file's path are made, as {@code Files.createDirectories} makes them.
     *
     * @throws java.io.UncheckedIOException if the file cannot be written
     */
    public void save(Path file) {
        ModelFile.write(this, Objects.requireNonNull(file, "file"));
    }

    /** The saved form, as bytes ({@link #load(byte[])} reads it). */
    public byte[] toBytes() {
        return ModelFile.bytes(this);
    }

    /**
     * Loads a saved predictor of any format this library wrote (version-1 and version-2 host, GNN and device model
     * files included); predictions are bit-identical to the saved one's.
     *
     * @throws org.scaledl.InvalidInputException for a truncated, tampered, foreign, out-of-range or newer-format file
     */
    public static RuntimePredictor load(Path file) {
        return ModelFile.read(Objects.requireNonNull(file, "file"));
    }

    /**
     * Loads a saved predictor from a stream (read to its end, not closed).
     *
     * @param source what to call the stream in error messages
     * @throws org.scaledl.InvalidInputException for bad content
     */
    public static RuntimePredictor load(InputStream in, String source) {
        return ModelFile.read(Objects.requireNonNull(in, "in"), Objects.requireNonNull(source, "source"));
    }

    /**
     * Loads a predictor whose integrity its origin vouches for (a resource of a jar checked when it was built, as the
     * bundled models are): {@link #load(byte[])} without recomputing the file's checksum. Every field is still
     * range-checked.
     *
     * @throws org.scaledl.InvalidInputException for bad content
     */
    public static RuntimePredictor loadTrusted(byte[] bytes, String source) {
        return ModelFile.read(Objects.requireNonNull(bytes, "bytes"), Objects.requireNonNull(source, "source"), false);
    }

    /**
     * Loads a saved predictor from bytes.
     *
     * @throws org.scaledl.InvalidInputException for bad content
     */
    public static RuntimePredictor load(byte[] bytes) {
        return ModelFile.read(Objects.requireNonNull(bytes, "bytes"), "bytes");
    }

    /** Refuses what the stage cannot predict: another device, a parallelism it does not model, a partial graph. */
    private void check(Workload w) {
        Objects.requireNonNull(w, "workload");
        int micro = w.parallelism().microBatches();
        if (micro > 1 && w.batch() % micro != 0) {
            // the engines run whole micro-batches: a remainder would be timed as a full one while the throughput
            // counted the batch as given
            throw new IllegalArgumentException("a replica's batch of " + w.batch() + " is not a whole number of its "
                    + micro + " micro-batches (the batch is the micro-batch's size times the micro-batches)");
        }
        stage.check(w);
        if (!allowPartial && !w.graph().coverage().isComplete()) {
            throw new IllegalArgumentException("graph " + w.graph().name() + " is only partly resolved ("
                    + w.graph().coverage().summary() + "); predict it anyway with allowingPartialGraphs() "
                    + "(CLI --allow-partial)");
        }
    }

    /** The interaction stage's factor for a workload whose layer-wise prediction is {@code base} (1 without one). */
    private double factor(Workload w, double base) {
        if (interactions == null) {
            return 1;
        }
        ModelGraph g = w.graph();
        return prepared.get(g, w.device(), () -> interactions.prepare(g, referenceLayerMillis(w))).factor(w, base);
    }

    /** The per-layer times of a workload's graph in the reference workload on its machine. */
    double[] referenceLayerMillis(Workload w) {
        Workload.Builder ref = Workload.builder(w.graph()).phase(Phase.INFER);
        w.device().ifPresent(ref::device);
        return stage.cost(ref.build()).layerMillis();
    }

    /** The predicted time in ms, without interval, breakdown or warnings (the fast path). */
    public double predictMillis(Workload w) {
        check(w);
        double base = stage.millis(w);
        return base * factor(w, base);
    }

    @Override
    public Prediction predict(Workload w) {
        check(w);
        StageCost cost = stage.cost(w);
        Prediction point = predictPoint(w, cost);
        // a configuration's compact graph (one block of each kind) is checked by its size only where an interaction
        // model reads it whole; its size is not the model's
        Domain.Check c = domain.check(w, point, interactions != null || w.graph().blocks().isEmpty());
        double ms = point.millis();
        // what the job was taken to run (a precision's fallback, the topology) first, then where it leaves the data
        List<PredictionWarning> warnings = new ArrayList<>();
        for (StageCost.Note note : cost.notes()) {
            warnings.add(new PredictionWarning(switch (note.kind()) {
                case ASSUMED -> PredictionWarning.Kind.ASSUMED;
                case CHOSEN -> PredictionWarning.Kind.CHOSEN;
                case UNUSUAL -> PredictionWarning.Kind.UNUSUAL_JOB;
                case NOTED -> PredictionWarning.Kind.NOTE;
            }, note.text(), Optional.empty(), "", 1));
        }
        warnings.addAll(c.warnings());
        calibratedElsewhere(w).ifPresent(warnings::add);
        java.util.OptionalDouble memory = cost.memoryBytes().isPresent()
                ? java.util.OptionalDouble.of(cost.memoryBytes().getAsDouble() / GIB) : java.util.OptionalDouble.empty();
        if (memory.isPresent() && w.device().isPresent() && w.device().get().memoryGB() > 0
                && memory.getAsDouble() > w.device().get().memoryGB()) {
            warnings.add(new PredictionWarning(PredictionWarning.Kind.OUT_OF_MEMORY, String.format(java.util.Locale.ROOT,
                    "needs %.1f GiB per device%s, more than the %s GiB of %s (shard it: %s)", memory.getAsDouble(),
                    cost.memoryParts().map(d -> " (" + d.describe() + ")").orElse(""), w.device().get().memoryGB(),
                    w.device().get().name(), w.phase() == org.scaledl.workload.Phase.INFER
                            ? "tensor or pipeline parallelism, a smaller batch"
                            // (ZeRO shards over the data-parallel replicas, or the experts' own group: with one
                            // of each it has nothing to shard over)
                            : "tensor or pipeline parallelism, " + (w.graph().transformer().isPresent()
                                    && org.scaledl.model.exec.MegatronExecution.shardsNothing(w) ? "" : "ZeRO, ")
                                    + (recomputesAllItCan(w) ? "" : "recomputation, ") + "a smaller micro-batch"),
                    Optional.of(memory.getAsDouble()),
                    "<= " + w.device().get().memoryGB(), 1));
        }
        double distance = c.distance();
        if (memory.isPresent() && atMemoryEdge(w, memory.getAsDouble())) {
            Device d = w.device().orElseThrow();
            Workload chosen = resolved(w);
            String choice = chosen.recomputeLabel() + (chosen.offloadLayers() > 0 ? ", offload_layers "
                    + chosen.offloadLayers() : "");
            // this warning says the choice: the note that said it alone goes
            warnings.removeIf(x -> x.kind() == PredictionWarning.Kind.CHOSEN);
            warnings.add(new PredictionWarning(PredictionWarning.Kind.NEAR_MEMORY_LIMIT, String.format(
                    java.util.Locale.ROOT, "the job fills %.1f GiB of the %.1f GiB of %s with the recomputation chosen "
                            + "for it (recompute auto: %s): a tuned recipe this close to the limit may recompute more "
                            + "or less, or offload, so the interval is widened (set the recompute to fix the choice)",
                    memory.getAsDouble(), d.memoryGB(), d.name(), choice), Optional.of(memory.getAsDouble()),
                    String.format(java.util.Locale.ROOT, "< %.1f", (1 - MEMORY_EDGE) * d.memoryGB()), 1));
            distance += MEMORY_EDGE_DISTANCE;
        } else if (memory.isPresent() && w.phase() == Phase.TRAIN && w.graph().transformer().isPresent()
                && w.device().isPresent() && nearMemoryEdge(memory.getAsDouble(), w.device().get().memoryGB())) {
            // a job whose settings are its own this close to the limit: its time is no less certain, but whether it
            // fits is (the estimate leaves out the allocator's fragmentation and the framework's own buffers)
            Device d = w.device().orElseThrow();
            warnings.add(new PredictionWarning(PredictionWarning.Kind.NOTE, String.format(java.util.Locale.ROOT,
                    "the job fills %.1f GiB of the %.1f GiB of %s, within %.0f %% of it: the estimate leaves out the "
                            + "memory allocator's fragmentation and the framework's own buffers, so it may not fit",
                    memory.getAsDouble(), d.memoryGB(), d.name(), 100 * MEMORY_EDGE), Optional.of(
                            memory.getAsDouble()), String.format(java.util.Locale.ROOT, "< %.1f",
                            (1 - MEMORY_EDGE) * d.memoryGB()), 1));
        }
        double[] iv = stage.interval(w).orElse(new double[] {logLow, logHigh});
        return new Prediction(ms, ms * Math.exp(iv[0] - WIDEN * distance),
                ms * Math.exp(iv[1] + WIDEN * distance), point.breakdown(), warnings, samples(w), memory, job(w),
                cost.memoryParts());
    }

    /**
     * Said of a transformer job on a GPU none of the transformer runs this model was calibrated on ran on: the
     * execution model's coefficients are one set for every GPU, so the calibration moved this job's prediction too.
     * Said too of any job on a GPU the model was calibrated on under the same name but with other figures.
     */
    private Optional<PredictionWarning> calibratedElsewhere(Workload w) {
        // (the runs of imported graphs move their own per-phase factors, not the execution model)
        List<String> cal = provenance.executionCalibrationDevices();
        Optional<Device> d = w.device().filter(Device::isGpu);
        if (d.isPresent() && calibratedOnOtherFigures(d.get())) {
            return Optional.of(new PredictionWarning(PredictionWarning.Kind.CALIBRATED_ELSEWHERE, "this model was "
                    + "calibrated on runs of " + d.get().name() + " described with other figures (its --devices row "
                    + "has changed since): the calibration fits that description, not this one", Optional.empty(),
                    "", 1));
        }
        // (a GPU named as a catalog matches names: ACME X1 is the Acme X1 calibrated on)
        if (cal.isEmpty() || d.isEmpty() || !modelsClusters() || w.graph().transformer().isEmpty()
                || cal.stream().anyMatch(c -> Device.key(c).equals(Device.key(d.get().name())))) {
            return Optional.empty();
        }
        return Optional.of(new PredictionWarning(PredictionWarning.Kind.CALIBRATED_ELSEWHERE, "this model was "
                + "calibrated on runs of " + String.join(", ", cal) + " only; its execution coefficients are shared by "
                + "every GPU, so a job on " + d.get().name() + " is predicted with that cluster's coefficients too "
                + "(the model it was calibrated from may suit " + d.get().name() + " better)", Optional.empty(), "",
                1));
    }

    /**
     * Whether a training job of a transformer left its recomputation to the predictor and the choice fills the GPU's
     * memory to within {@link #MEMORY_EDGE} of its capacity (not beyond it: that is out of memory).
     */
    private static boolean atMemoryEdge(Workload w, double memoryGiB) {
        if (w.recompute() != org.scaledl.workload.Recompute.AUTO || w.phase() != Phase.TRAIN
                || w.graph().transformer().isEmpty() || w.device().isEmpty() || w.device().get().memoryGB() <= 0) {
            return false;
        }
        return nearMemoryEdge(memoryGiB, w.device().get().memoryGB());
    }

    /**
     * Whether a job's memory fills its device's capacity to within {@link #MEMORY_EDGE} of it, not beyond it (that
     * is out of memory); never for a device of unknown memory (0).
     *
     * @param memoryGiB the job's memory per device, GiB
     * @param capacity  the device's memory, GiB
     */
    public static boolean nearMemoryEdge(double memoryGiB, double capacity) {
        return capacity > 0 && memoryGiB >= (1 - MEMORY_EDGE) * capacity && memoryGiB <= capacity;
    }

    /**
     * What an iteration does across the job: its GPUs, tokens and model FLOPs ({@link Prediction.Job}): the forward
     * pass's contractions once in inference, three times in training (forward, input and weight gradients), twice with
     * LoRA (no weight gradients of the frozen weights: NeMo's and Megatron-Bridge's convention too).
     */
    static Prediction.Job job(Workload w) {
        double samples = samples(w);
        double tokens = w.graph().transformer().map(t -> samples * t.seq()).orElse(0.0);
        double passes = w.phase() != Phase.TRAIN ? 1 : w.loraRank() > 0 ? 2 : 3;
        double flops = passes * forwardFlopsPerSample(w.graph(), w.phase()) * samples;
        return new Prediction.Job(w.device().isPresent() && w.device().get().isGpu() ? w.parallelism().ranks() : 0,
                tokens, flops);
    }

    private static final Object FORWARD_FLOPS = new Object();
    private static final Object PREFILL_FLOPS = new Object();

    /**
     * The forward pass's contraction FLOPs of one sample (every repeat of every layer); in inference, a generating
     * transformer's head over its last token alone ({@link org.scaledl.model.exec.MegatronExecution#prefillRows}), as
     * its prefill is timed.
     */
    static double forwardFlopsPerSample(ModelGraph g, Phase phase) {
        return g.memo(phase == Phase.TRAIN ? FORWARD_FLOPS : PREFILL_FLOPS, graph -> {
            boolean generates = phase != Phase.TRAIN && org.scaledl.model.exec.MegatronExecution.generates(graph);
            double f = 0;
            for (org.scaledl.workload.LayerFeatures lf : org.scaledl.features.FeatureExtractor.of(graph)
                    .extract(1, Phase.INFER)) {
                int rows = org.scaledl.model.exec.MegatronExecution.prefillRows(graph, graph.role(lf.layer()), phase,
                        generates);
                if (rows > 0 && (lf.family() == org.scaledl.workload.OpFamily.DENSE
                        || lf.family() == org.scaledl.workload.OpFamily.CONV)) {
                    f += lf.flopsFwd() * graph.repeats(lf.layer()) / rows;
                }
            }
            return f;
        });
    }

    /** Bytes in a GiB, the unit of device memory sizes. */
    private static final double GIB = org.scaledl.model.cost.MemoryUse.BYTES_PER_GIB;


    /** Samples one iteration processes across its data-parallel replicas. */
    private static double samples(Workload w) {
        return (double) w.batch() * w.parallelism().data();
    }

    /** The prediction with its breakdown, corrected by the interaction stage, without interval or warnings. */
    private Prediction predictPoint(Workload w, StageCost cost) {
        double f = factor(w, cost.totalMillis());
        ModelGraph g = w.graph();
        List<Prediction.Contribution> parts = new ArrayList<>();
        // a stage's total may hold what its layers' own times do not (a whole model's calibration, a floor on a
        // replica's share): shared over the layers as their times are, so that the breakdown adds up to the total
        double layerSum = 0;
        double termSum = 0;
        for (int i = 0; i < cost.layers(); i++) {
            layerSum += Math.max(0, cost.layerMillis(i));
        }
        for (StageCost.Term t : cost.terms()) {
            termSum += t.millis();
        }
        double rest = cost.totalMillis() - termSum;
        double layerScale = layerSum > 0 && rest >= 0 && Math.abs(rest - layerSum) > 1e-9 * (1 + cost.totalMillis())
                ? rest / layerSum : 1;
        for (int i = 0; i < cost.layers(); i++) {
            double t = cost.layerMillis(i) * layerScale;
            if (t > 0) {
                parts.add(Prediction.Contribution.layer(i, g.layer(i).name(), cost.family(i), f == 1 ? t : t * f));
            }
        }
        for (StageCost.Term t : cost.terms()) {
            Prediction.Kind kind = switch (t.kind()) {
                case COMMUNICATION -> Prediction.Kind.COMMUNICATION;
                case OVERHEAD -> Prediction.Kind.OVERHEAD;
                case COMPUTE -> Prediction.Kind.COMPUTE;
            };
            parts.add(Prediction.Contribution.term(t.name(), kind, f == 1 ? t.millis() : t.millis() * f));
        }
        double unshared = rest - layerSum * layerScale;
        if (Math.abs(unshared) > 1e-9 * (1 + cost.totalMillis())) {
            // what no layer can take (terms beyond the total, or a total without layers): said as its own part
            parts.add(Prediction.Contribution.term("unattributed", Prediction.Kind.OVERHEAD, unshared * f));
        }
        parts.sort(Comparator.comparingDouble(Prediction.Contribution::millis).reversed());
        double ms = cost.totalMillis() * f;
        return new Prediction(ms, ms, ms, parts);
    }

    /**
     * Predicts many workloads, in order: each is checked and refused as {@link #predict} would (the refusal then
     * names the workload's place in the list, from 0, and the workload), and each prediction has its interval,
     * warnings and memory but <em>no breakdown</em> (what a scheduler scoring candidates keeps). Every prediction is
     * the one {@link #predict} gives, whatever the order of the workloads or the threads asking.
     *
     * @throws IllegalArgumentException for the first workload refused, naming it
     */
    public List<Prediction> predictAll(Iterable<Workload> workloads) {
        List<Prediction> out = new ArrayList<>();
        for (Workload w : Objects.requireNonNull(workloads, "workloads")) {
            Objects.requireNonNull(w, () -> "workload " + out.size() + " is null");
            try {
                out.add(predictScored(w));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("workload " + out.size() + " (" + w + "): " + e.getMessage(), e);
            } catch (org.scaledl.InvalidInputException e) {
                throw org.scaledl.InvalidInputException.wrap(e.source().orElse(null), "workload " + out.size() + " ("
                        + w + "): " + e.detail(), e);
            }
        }
        return out;
    }

    /** A prediction without breakdown (see {@link #predictAll}). */
    public Prediction predictScored(Workload w) {
        Prediction p = predict(w);
        return new Prediction(p.millis(), p.lowMillis(), p.highMillis(), List.of(), p.warnings(), p.samples(),
                p.memoryGb(), p.job(), p.memoryParts());
    }

    /**
     * A copy adapted to a device from a few profiled operators: per device, family, pass and precision, every layer
     * prediction is multiplied by the damped correction of that group ({@link DeviceLayerModel#adapt}: the slope of
     * measured on predicted time). Device predictors only.
     *
     * @throws IllegalStateException for a host predictor
     * @throws org.scaledl.InvalidInputException for a group of kernels measuring a median more than
     *         {@link #MAX_CALIBRATION_RATIO} times off their prediction (another unit, or another GPU)
     */
    public RuntimePredictor adapt(List<OpMeasurement> profiled) {
        java.util.Objects.requireNonNull(profiled, "profiled");
        LayerStage adapted = stage.adapt(profiled);
        Domain dom = domain.plus(new Domain.Collector().operators(profiled).build(domain.crossValidated()));
        return new RuntimePredictor(name, adapted, interactions, logLow, logHigh, dom,
                provenance.adapted(Provenance.ADAPTED_KERNELS, profiled.size(), List.of()), allowPartial);
    }

    /**
     * A copy calibrated on a few measured runs. A device predictor: shared per-phase factors and a damped factor per
     * GPU measured (these replace the earlier calibration); runs of configuration-built transformers
     * ({@link org.scaledl.transformer.TransformerSpec}) refit the Megatron execution model's coefficients instead,
     * pulled toward the current ones (fewer than eight move their level only; more refit them where that predicts
     * the runs, each held out, better than the level alone, a few moving them little, many deciding them; a predictor
     * without an execution model yet fits one from eight runs on as a bundled model is fitted; runs of one job, its
     * repeats, weigh together as one run does where none is given a weight of its own ({@code fit_weight}), so
     * logging every iteration of a job as a run moves the model no further than one run of it). A host predictor: <b>few-shot machine adaptation</b>,
     * every CPU machine the runs measure gets a damped correction of the fitted machine that predicts them best, so a
     * machine the predictor has not seen becomes predictable from a handful of its runs. No runs change nothing: this
     * predictor is returned as it is (its provenance names no calibration).
     *
     * <p>A run measured more than {@link #MAX_CALIBRATION_RATIO} times slower or faster than predicted is refused,
     * named by its index (from 1), source and workload: it is another job, or its time is in another unit (seconds
     * for milliseconds are 1,000 times), not the predictor's error on it. Predicted before the calibration it would
     * replace: a host machine's fitted prediction (a machine not seen: the fitted machine closest to the run), an
     * imported graph's layer sum on a GPU, a transformer's current execution model. (The command line's
     * {@code fit --calibrate gpu --runs} leaves out, with a warning, a job's runs beyond 5 times.) Runs of imported
     * graphs set a device predictor's shared per-phase factor to their median ratio, which moves the predictions of
     * the GPUs they did not run on too; runs of transformers refit the execution model, which every GPU shares.
     *
     * @throws IllegalArgumentException for a run without a device of the predictor's kind
     * @throws org.scaledl.InvalidInputException for a run measured more than {@link #MAX_CALIBRATION_RATIO} times
     *                                  off its prediction (bad input data: another job, or another unit)
     */
    public RuntimePredictor calibrate(List<Sample> runs) {
        Objects.requireNonNull(runs, "runs").forEach(r -> Objects.requireNonNull(r, "a run of runs"));
        if (runs.isEmpty()) {
            return this;
        }
        for (int i = 0; i < runs.size(); i++) {
            checkCalibrationRun(i, runs.get(i));
        }
        Domain dom = domain.plus(new Domain.Collector().samples(runs).build(domain.crossValidated()));
        // a run of weight 0 (its fit_weight tag) moves nothing: not counted, nor its device
        List<Sample> weighed = runs.stream().filter(r -> org.scaledl.model.exec.MegatronFit.weight(r) > 0).toList();
        List<String> measured = weighed.stream().flatMap(r -> r.workload().device().map(Device::name).stream())
                .toList();
        // the runs of configuration-built transformers refit the execution model every GPU shares
        List<String> execution = weighed.stream().filter(r -> r.workload().graph().transformer().isPresent())
                .flatMap(r -> r.workload().device().map(Device::name).stream()).toList();
        LayerStage calibrated = stage.calibrate(runs);
        return new RuntimePredictor(name, calibrated, interactions, logLow, logHigh, dom,
                provenance.adapted(Provenance.CALIBRATION_RUNS, weighed.size(), measured, execution, weighed.stream()
                        .flatMap(r -> r.workload().device().stream()).filter(RuntimePredictor::described).distinct()
                        .toList()), allowPartial);
    }

    /**
     * Whether this model was calibrated on runs of a GPU of this device's name (as a catalog matches names) whose
     * figures were others ({@code --devices} rows record a digest of theirs): its calibration fits that description.
     */
    public boolean calibratedOnOtherFigures(Device d) {
        String key = Device.key(d.name());
        return provenance.calibrationDeviceFigures().entrySet().stream()
                .filter(e -> Device.key(e.getKey()).equals(key) && e.getValue().startsWith(Provenance.FIGURES_VERSION))
                .anyMatch(e -> !e.getValue().equals(Provenance.figuresDigest(d)));
    }

    /**
     * Whether a calibration run's device is one its user described (a GPU beyond the bundled catalog, from
     * {@code --devices}), whose figures the calibrated model records: a bundled GPU's row changes with a release, not
     * with its user, and a later release's correction is no other description of the GPU calibrated on.
     */
    private static boolean described(Device d) {
        return d.isGpu() && org.scaledl.io.DeviceCatalog.bundled().find(d.name()).isEmpty();
    }

    /**
     * The runs a calibration should take, screened as {@code fit --calibrate gpu --runs} screens them
     * ({@link CalibrationScreen}: a job's runs more than {@value CalibrationScreen#MISMATCH} times off their prediction
     * left out, the runs predicted not to fit named, an earlier calibration said); then
     * {@code calibrate(screen.kept())}.
     *
     * @throws IllegalArgumentException naming a run (its place from 1 and its source) this predictor cannot predict,
     *         as {@link #calibrate} does
     */
    public CalibrationScreen screen(List<Sample> runs) {
        return CalibrationScreen.of(this, runs);
    }

    /** Refuses a calibration run far off what the stage predicts of it (where it can tell; else the stage says why). */
    private void checkCalibrationRun(int index, Sample run) {
        if (modelsClusters() && run.workload().graph().transformer().isPresent()) {
            // a job the execution model refuses (a layout it does not take): said naming the run, not the batch
            CalibrationScreen.predictNamed(this, index, run);
        }
        double ratio = stage.calibrationRatio(run);
        if (LayerStage.beyondMeasuredRatio(ratio)) {
            Workload w = run.workload();
            String where = CalibrationScreen.source(run).map(x -> x + ", ").orElse("");
            throw org.scaledl.InvalidInputException.of(String.format(java.util.Locale.ROOT, "calibration run %d (%s%s) "
                    + "measures %s ms, %s times %s than predicted: it is another job, or its time is not in "
                    + "milliseconds (at most %.0f times either way is calibrated on)", index + 1, where,
                    org.scaledl.InvalidInputException.printable(w.toString(), 200),
                    String.format(java.util.Locale.ROOT, "%.4g", run.millis()), ratio == 0 ? "more than 1e308"
                    // (a ratio of 1e300 said in three digits, not three hundred)
                    : String.format(java.util.Locale.ROOT, Math.max(ratio, 1 / ratio) < 1e6 ? "%.0f" : "%.3g",
                            ratio > 1 ? ratio : 1 / ratio),
                    ratio > 1 ? "slower" : "faster", MAX_CALIBRATION_RATIO));
        }
    }

    @Override
    public String toString() {
        return "RuntimePredictor[" + name + ", " + stage.kind() + (interactions == null ? ""
                : " + " + interactions.describe()) + ", " + provenance.trainingSamples() + " samples]";
    }
}
