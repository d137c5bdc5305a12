package org.scaledl.model.device;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Optional;
import org.scaledl.model.comm.CommunicationModel;
import org.scaledl.model.cost.LayerStage;
import org.scaledl.model.cost.StageCost;
import org.scaledl.model.exec.EagerModel;
import org.scaledl.model.exec.ExecutionTerm;
import org.scaledl.model.exec.MegatronExecution;
import org.scaledl.model.exec.MegatronFit;
import org.scaledl.model.exec.MegatronModel;
import org.scaledl.model.exec.MegatronTerms;
import org.scaledl.model.exec.ParallelExecution;
import org.scaledl.workload.Device;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * The device stage: the {@link DeviceLayerModel} gives each layer's cost on one GPU, {@link ParallelExecution}
 * combines those costs over tensor, pipeline and data parallelism with the {@link CommunicationModel}'s collectives.
 * Any GPU the workload's {@link Device} describes is predicted, measured or not.
 *
 * @param layers        the per-layer cost model
 * @param communication the collectives' cost, when the predictor was fitted with collective measurements
 * @param megatron      the Megatron execution model's coefficients, fitted on measured iterations of
 *                      configuration-built transformers (empty: {@link MegatronModel#uncalibrated()})
 * @param eager         the host's dispatch floor of eager execution ({@link EagerModel#NONE} in files written before
 *                      it)
 */
public record DeviceStage(DeviceLayerModel layers, Optional<CommunicationModel> communication,
        Optional<MegatronModel> megatron, EagerModel eager) implements LayerStage {
    /** The {@code kind} of its saved form. */
    public static final String KIND = "device";

    /** A stage without a Megatron calibration or a dispatch floor. */
    public DeviceStage(DeviceLayerModel layers, Optional<CommunicationModel> communication) {
        this(layers, communication, Optional.empty(), EagerModel.NONE);
    }

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public void check(Workload w) {
        if (w.device().isEmpty() || !w.device().get().isGpu()) {
            throw new IllegalArgumentException("a device predictor needs a workload on a GPU: " + w);
        }
        ParallelExecution.check(w, communication);
    }

    @Override
    public double millis(Workload w) {
        if (single(w)) {
            return eager.millis(layers.predictMillis(w), ParallelExecution.operators(w));
        }
        if (w.graph().transformer().isPresent()) {
            return megatron.orElseGet(MegatronModel::uncalibrated).millis(megatronTerms(w));
        }
        return cost(w).totalMillis();
    }

    /** One device, one micro-batch, an imported graph: the cached layer sum is the whole answer. */
    private static boolean single(Workload w) {
        return w.parallelism().ranks() == 1 && w.parallelism().microBatches() == 1
                && w.graph().transformer().isEmpty();
    }

    @Override
    public StageCost cost(Workload w) {
        Device d = DeviceLayerModel.deviceOf(w);
        double single = single(w) ? layers.predictMillis(w) : 0;
        return ParallelExecution.run(w, layers, communication, d, single, megatron.orElse(null), eager);
    }

    /**
     * The uncalibrated terms of an iteration of a configuration-built transformer (what a Megatron calibration fits).
     *
     * @throws IllegalArgumentException for a workload of another graph, or one the stage refuses
     */
    public MegatronTerms megatronTerms(Workload w) {
        check(w);
        org.scaledl.workload.Device d = DeviceLayerModel.deviceOf(w);
        return MegatronExecution.terms(w, layers, communication, d, w.topology().orElseGet(
                () -> org.scaledl.workload.Topology.assumedFor(d)));
    }

    @Override
    public Workload resolve(Workload w) {
        return w.graph().transformer().isPresent() && w.device().isPresent() && w.device().get().isGpu()
                ? MegatronExecution.resolve(w, layers, DeviceLayerModel.deviceOf(w)) : w;
    }

    @Override
    public java.util.OptionalDouble memoryBytes(Workload w) {
        if (w.graph().transformer().isPresent()) {
            return java.util.OptionalDouble.of(MegatronExecution.memoryBytes(w, layers, DeviceLayerModel.deviceOf(w)));
        }
        return cost(w).memoryBytes();
    }

    @Override
    public Optional<double[]> interval(Workload w) {
        return w.graph().transformer().flatMap(t -> megatron.map(m -> m.interval(t.mixtureOfExperts())));
    }

    /** A copy with a dispatch floor for eager execution. */
    public DeviceStage withEager(EagerModel model) {
        return new DeviceStage(layers, communication, megatron, model);
    }

    /** A copy with a fitted Megatron model. */
    public DeviceStage withMegatron(MegatronModel model) {
        return new DeviceStage(layers, communication, Optional.of(model), eager);
    }

    /**
     * A calibration run over what is predicted of it before a calibration: a transformer's by the current execution
     * model (a calibration refits it around itself), an imported graph's by its layers' sum (a calibration replaces
     * the factors on it); NaN for a run without a GPU.
     */
    @Override
    public double calibrationRatio(Sample run) {
        Workload w = run.workload();
        if (!w.device().map(Device::isGpu).orElse(false)) {
            return Double.NaN;
        }
        try {
            return run.millis() / (w.graph().transformer().isPresent() ? millis(w) : layers.layerSum(w));
        } catch (IllegalArgumentException | org.scaledl.InvalidInputException e) {
            return Double.NaN;
        }
    }

    /**
     * A copy calibrated on a few measured runs: runs of configuration-built transformers refit the Megatron
     * model's coefficients, pulled toward the current ones ({@link MegatronFit}: fewer than
     * {@link MegatronFit#TERM_RUNS} move their level only, more refit them where that predicts the runs held out
     * better than the level alone, a term no run exercises stays); a stage
     * without a Megatron model yet fits it from that many runs on as a bundled model is fitted, from the priors, and
     * moves the priors' level from fewer; runs of imported graphs recalibrate the layer model's shared
     * per-phase factors and a damped factor per GPU measured ({@link DeviceLayerModel#calibrate}).
     */
    @Override
    public DeviceStage calibrate(List<Sample> runs) {
        for (int i = 0; i < runs.size(); i++) {
            Workload w = runs.get(i).workload();
            org.scaledl.Checks.argument(w.device().map(Device::isGpu).orElse(false), "calibration run %s (%s) %s: a "
                    + "device (GPU) predictor calibrates on runs of GPUs (Workload.Builder.device)", i + 1,
                    org.scaledl.InvalidInputException.printable(w.toString(), 200), w.device().map(d -> "is on CPU "
                    + "machine " + d.name()).orElse("names no device"));
        }
        List<Sample> transformers = runs.stream().filter(r -> r.workload().graph().transformer().isPresent())
                .toList();
        List<Sample> eagerRuns = runs.stream().filter(r -> r.workload().graph().transformer().isEmpty()).toList();
        // a first fit of the execution model learns its coefficients at the runs' speeds, which the model is then
        // fitted at (DeviceLayerModel.SpeedCap); a recalibration of a fitted one (a user's few runs of a faster GPU)
        // learns on top of the description its coefficients were fitted with, which stays
        DeviceStage covered = megatron.isPresent() ? this
                : new DeviceStage(layers.coveringRuns(runs), communication, megatron, eager);
        Optional<MegatronModel> m = megatron;
        if (!transformers.isEmpty()) {
            // a user's runs are told apart by their ids (left out one by one), published ones by family
            String group = transformers.stream().allMatch(r -> r.workload().tag("id").isPresent())
                    && transformers.stream().map(r -> r.workload().tag("family").orElse("")).distinct().count() < 3
                    ? "id" : "family";
            // a first fit of runs enough to refit the terms (no execution model yet) is the fit a bundled model is
            // made by (LayerCost's), from the priors; fewer runs move the priors' level only, and a fitted model is
            // calibrated around itself
            m = Optional.of((megatron.isEmpty() && transformers.size() >= MegatronFit.TERM_RUNS
                    ? MegatronFit.fit(covered::megatronTerms, transformers, group)
                    : MegatronFit.fit(covered::megatronTerms, transformers, group,
                            megatron.orElseGet(MegatronModel::uncalibrated), true)).model());
        }
        return new DeviceStage(eagerRuns.isEmpty() ? covered.layers() : covered.layers().calibrate(eagerRuns),
                communication, m, eager);
    }

    /** A copy adapted to profiled operators ({@link DeviceLayerModel#adapt}). */
    @Override
    public DeviceStage adapt(List<org.scaledl.workload.OpMeasurement> profiled) {
        return new DeviceStage(layers.adapt(profiled), communication, megatron, eager);
    }

    @Override
    public Optional<org.scaledl.model.cost.OperatorCost> operators() {
        return Optional.of(layers);
    }

    @Override
    public boolean modelsClusters() {
        return true;
    }

    @Override
    public List<String> devices() {
        return layers.devices();
    }

    @Override
    public double[] designRow(Workload w) {
        if (w.graph().transformer().isPresent()) {
            // what a run tells the Megatron fit: each term's share of the predicted time (the sensitivity of the
            // log time to each coefficient at the current ones)
            MegatronTerms t = megatronTerms(w);
            MegatronModel m = megatron.orElseGet(MegatronModel::uncalibrated);
            double total = Math.max(1e-9, m.millis(t));
            ExecutionTerm[] all = ExecutionTerm.values();
            double[] row = new double[all.length];
            for (ExecutionTerm k : all) {
                // the term's share of the predicted time (its value alone where its coefficient is still 0; a
                // contraction class's calibrated time, shrunk and floored as the model computes it)
                double c = m.coefficient(k);
                row[k.ordinal()] = (k.dense() ? m.dense(t, k) : k == ExecutionTerm.DATA_COMM && c > 0
                        ? m.dataComm(t) : (c > 0 ? c : 1) * t.value(k)) / total;
            }
            return row;
        }
        return layers.designRow(w);
    }

    @Override
    public ObjectNode toJson() {
        ObjectNode o = layers.body();
        o.put("kind", KIND);
        if (communication.isPresent()) {
            o.set("communication", communication.get().toJson());
        }
        megatron.ifPresent(m -> o.set("megatron", m.toJson()));
        if (!eager.equals(EagerModel.NONE)) {
            o.set("eager", eager.toJson());
        }
        return o;
    }

    /**
     * Reads {@link #toJson()}; {@code communication} is the separate node of files written before the stage held it
     * (version 2), or missing.
     *
     * @throws org.scaledl.InvalidInputException for a malformed body
     */
    public static DeviceStage read(JsonNode layer, JsonNode communication) {
        JsonNode comm = layer.has("communication") ? layer.path("communication") : communication;
        Optional<MegatronModel> megatron = layer.path("megatron").isObject()
                ? Optional.of(MegatronModel.fromJson(layer.path("megatron"))) : Optional.empty();
        EagerModel eager = layer.path("eager").isObject() ? EagerModel.fromJson(layer.path("eager"))
                : EagerModel.NONE;
        return new DeviceStage(DeviceLayerModel.read(layer), comm != null && comm.isObject()
                ? Optional.of(CommunicationModel.fromJson(comm)) : Optional.empty(), megatron, eager);
    }
}
