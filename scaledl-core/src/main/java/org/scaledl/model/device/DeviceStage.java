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
 */
public record DeviceStage(DeviceLayerModel layers, Optional<CommunicationModel> communication) implements LayerStage {
    /** The {@code kind} of its saved form. */
    public static final String KIND = "device";

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
        return w.parallelism().ranks() == 1 ? layers.predictMillis(w) : cost(w).totalMillis();
    }

    @Override
    public StageCost cost(Workload w) {
        Device d = DeviceLayerModel.deviceOf(w);
        double single = w.parallelism().ranks() == 1 ? layers.predictMillis(w) : 0;
        return ParallelExecution.cost(w, layers, communication, d, single);
    }

    @Override
    public DeviceStage calibrate(List<Sample> runs) {
        return new DeviceStage(layers.calibrate(runs), communication);
    }

    /** A copy adapted to profiled operators ({@link DeviceLayerModel#adapt}). */
    public DeviceStage adapt(List<org.scaledl.workload.OpMeasurement> profiled) {
        return new DeviceStage(layers.adapt(profiled), communication);
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
        return new DeviceStage(DeviceLayerModel.read(layer), comm != null && comm.isObject()
                ? Optional.of(CommunicationModel.fromJson(comm)) : Optional.empty());
    }
}
