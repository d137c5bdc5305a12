package org.scaledl.model.device;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Optional;
import org.scaledl.model.comm.CommunicationModel;
import org.scaledl.model.cost.LayerStage;
import org.scaledl.model.cost.StageCost;
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
 * @param megatron      per {@link ParallelExecution.Group}, the coefficients of the Megatron execution model fitted on
 *                      measured iterations of configuration-built transformers (empty: uncalibrated, 1 each)
 */
public record DeviceStage(DeviceLayerModel layers, Optional<CommunicationModel> communication,
        Optional<double[]> megatron) implements LayerStage {
    /** The {@code kind} of its saved form. */
    public static final String KIND = "device";

    /** Copies. */
    public DeviceStage {
        megatron = megatron.map(double[]::clone);
    }

    /** A stage without Megatron coefficients. */
    public DeviceStage(DeviceLayerModel layers, Optional<CommunicationModel> communication) {
        this(layers, communication, Optional.empty());
    }

    @Override
    public Optional<double[]> megatron() {
        return megatron.map(double[]::clone);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DeviceStage s && s.layers.equals(layers) && s.communication.equals(communication)
                && java.util.Arrays.equals(s.megatron.orElse(null), megatron.orElse(null));
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(layers, communication, java.util.Arrays.hashCode(megatron.orElse(null)));
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
        return single(w) ? layers.predictMillis(w) : cost(w).totalMillis();
    }

    /** One device, one micro-batch, an imported graph: the cached layer sum is the whole answer. */
    private static boolean single(Workload w) {
        return w.parallelism().ranks() == 1 && w.parallelism().microBatches() == 1
                && w.graph().transformer().isEmpty();
    }

    @Override
    public StageCost cost(Workload w) {
        return execute(w).cost();
    }

    /** The iteration's cost and its uncalibrated cost groups (what a Megatron calibration fits). */
    public ParallelExecution.Result execute(Workload w) {
        Device d = DeviceLayerModel.deviceOf(w);
        double single = single(w) ? layers.predictMillis(w) : 0;
        return ParallelExecution.run(w, layers, communication, d, single, megatron.orElse(null));
    }

    /** A copy with Megatron coefficients (per {@link ParallelExecution.Group}). */
    public DeviceStage withMegatron(double[] coefficients) {
        return new DeviceStage(layers, communication, Optional.of(coefficients));
    }

    @Override
    public DeviceStage calibrate(List<Sample> runs) {
        return new DeviceStage(layers.calibrate(runs), communication, megatron);
    }

    /** A copy adapted to profiled operators ({@link DeviceLayerModel#adapt}). */
    public DeviceStage adapt(List<org.scaledl.workload.OpMeasurement> profiled) {
        return new DeviceStage(layers.adapt(profiled), communication, megatron);
    }

    @Override
    public List<String> devices() {
        return layers.devices();
    }

    @Override
    public double[] designRow(Workload w) {
        return layers.designRow(w);
    }

    @Override
    public ObjectNode toJson() {
        ObjectNode o = layers.body();
        o.put("kind", KIND);
        if (communication.isPresent()) {
            o.set("communication", communication.get().toJson());
        }
        if (megatron.isPresent()) {
            com.fasterxml.jackson.databind.node.ArrayNode a = o.putArray("megatron_coefficients");
            for (double c : megatron.get()) {
                a.add(c);
            }
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
        Optional<double[]> megatron = Optional.empty();
        if (layer.has("megatron_coefficients")) {
            JsonNode a = layer.path("megatron_coefficients");
            if (!a.isArray() || a.size() != ParallelExecution.GROUPS) {
                throw org.scaledl.InvalidInputException.of("megatron_coefficients must hold "
                        + ParallelExecution.GROUPS + " numbers");
            }
            double[] c = new double[a.size()];
            for (int i = 0; i < c.length; i++) {
                c[i] = org.scaledl.model.file.Fields.inRange(a.get(i), "megatron_coefficients[" + i + "]", 0, 1e6);
            }
            megatron = Optional.of(c);
        }
        return new DeviceStage(DeviceLayerModel.read(layer), comm != null && comm.isObject()
                ? Optional.of(CommunicationModel.fromJson(comm)) : Optional.empty(), megatron);
    }
}
