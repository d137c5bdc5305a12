package org.scaledl.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.data.Dataset;
import org.scaledl.data.DatasetReader;
import org.scaledl.data.Phase;
import org.scaledl.eval.GpuEvaluation;
import org.scaledl.hardware.DeviceCatalog;
import org.scaledl.kernels.KernelTables;
import org.scaledl.gnn.GnnModel;
import org.scaledl.gnn.GnnTrainer;
import org.scaledl.model.DeviceLayerModel;
import org.scaledl.model.OpMeasurement;
import org.scaledl.model.RuntimePredictor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl fit --data DIR --out model.sdl [--gnn [--attention]]}, or {@code scaledl fit --gpu --data
 * ../shared/data --out gpu.sdl [--devices my_gpus.csv] [--profiled my_kernels/]} for the device layer model.
 */
@Command(name = "fit", description = "Fit ScaleDL on a dataset and save the model.")
final class FitCommand implements Callable<Integer> {
    @Option(names = "--data", required = true, description = "Dataset folder (with --gpu: the folder with neusight/ "
            + "and deepbench/)")
    Path data;

    @Option(names = "--out", required = true, description = "Model file to write")
    Path out;

    @Option(names = "--seed", defaultValue = "0", description = "Seed recorded with the model")
    long seed;

    @Option(names = "--gnn", description = "Add the GNN stage (layer-wise model corrected by the GNN)")
    boolean gnn;

    @Option(names = "--attention", description = "With --gnn: attention message passing instead of mean")
    boolean attention;

    @Option(names = "--gpu", description = "Fit the device layer model on GPU kernel and model measurements")
    boolean gpu;

    @Option(names = "--devices", description = "With --gpu: extra device catalog CSV (NeuSight device_configs "
            + "layout)")
    Path devices;

    @Option(names = "--profiled", description = "With --gpu: folder of kernel tables (NeuSight kernels layout) "
            + "measured on your GPU; the model is adapted to them")
    Path profiled;

    @Override
    public Integer call() {
        if (gpu) {
            if (gnn || attention) {
                throw new IllegalArgumentException("--gpu cannot be combined with --gnn or --attention");
            }
            DeviceCatalog catalog = EvaluateGpuCommand.catalog(devices, data);
            DeviceLayerModel m = GpuEvaluation.fitAll(data, catalog);
            if (profiled != null) {
                List<OpMeasurement> rows = KernelTables.neusight(profiled, catalog);
                if (rows.isEmpty()) {
                    // KernelTables reports a folder without tables; these tables hold no rows
                    throw new IllegalArgumentException("the kernel tables in " + profiled + " hold no measurements");
                }
                m = m.adapt(rows);
                System.out.printf(Locale.ROOT, "adapted to %d profiled kernels: %s%n", rows.size(), m.corrections());
            }
            m.save(out);
            System.out.printf(Locale.ROOT, "fitted the device layer model on %d GPUs (calibration: inference x%.3f, "
                    + "training x%.3f), wrote %s%n", m.devices().size(), m.factor(Phase.INFER),
                    m.factor(Phase.TRAIN), out);
            return 0;
        }
        if (devices != null || profiled != null) {
            throw new IllegalArgumentException("--devices and --profiled need --gpu");
        }
        Dataset d = DatasetReader.read(data);
        if (gnn) {
            GnnModel m = GnnTrainer.interactions().withAttention(attention)
                    .withLayerModel(RuntimePredictor.builder().seed(seed).build()).fit(d.samples());
            m.save(out);
            System.out.printf(Locale.ROOT, "fitted %s on %d samples (correction shrink %.1f), wrote %s%n", m.name(),
                    d.size(), m.shrink(), out);
            return 0;
        }
        if (attention) {
            throw new IllegalArgumentException("--attention needs --gnn");
        }
        RuntimePredictor p = RuntimePredictor.builder().seed(seed).build().fit(d.samples());
        p.save(out);
        System.out.printf(Locale.ROOT, "fitted on %d samples (cross-validated MRE %.1f%%), wrote %s%n", d.size(),
                100 * p.provenance().cvMre(), out);
        return 0;
    }
}
