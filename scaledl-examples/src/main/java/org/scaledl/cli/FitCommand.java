package org.scaledl.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.gnn.GnnInteractions;
import org.scaledl.io.DatasetReader;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.GpuData;
import org.scaledl.io.KernelTables;
import org.scaledl.model.device.DeviceLayerModel;
import org.scaledl.model.LayerCost;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl fit --data DIR --out model.sdl [--gnn [--attention]]}, or {@code scaledl fit --gpu --data
 * ../shared/data --out gpu.sdl [--devices my_gpus.csv] [--profiled my_kernels/]} for the device layer model.
 */
@Command(name = "fit", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Fit ScaleDL on a dataset and save the model.")
final class FitCommand implements Callable<Integer> {
    @Option(names = "--data", required = true, description = "Dataset folder; repeat it to fit several machines "
            + "into one predictor (with --gpu: the folder with neusight/ and deepbench/)")
    List<Path> dataDirs;

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

    @Option(names = "--calibrate", description = "Fitted model (a bundled name or a file) to adapt to a new "
            + "machine instead of fitting anew: "
            + "the runs of --data (a few are enough) are that machine's; few-shot per-group corrections of the "
            + "closest machine the model knows")
    String calibrate;

    @Override
    public Integer call() {
        Path data = dataDirs.get(0);
        if (calibrate != null) {
            if (gpu || gnn) {
                throw new IllegalArgumentException("--calibrate adapts a fitted host model; --gpu and --gnn fit anew");
            }
            Dataset runs = readAll();
            RuntimePredictor p = ModelArgument.load(calibrate).calibrate(runs.samples());
            p.save(out);
            System.out.printf(Locale.ROOT, "calibrated %s to %d runs of %s, wrote %s%n", calibrate, runs.size(),
                    p.machines(), out);
            return 0;
        }
        if (gpu && dataDirs.size() > 1) {
            throw new IllegalArgumentException("--gpu reads one data root");
        }
        if (gpu) {
            if (gnn || attention) {
                throw new IllegalArgumentException("--gpu cannot be combined with --gnn or --attention");
            }
            Progress progress = Progress.of("fit --gpu", Main.quiet);
            progress.update(0, 2, "reading " + data);
            DeviceCatalog catalog = Catalogs.of(devices, data);
            GpuData d = GpuData.read(data, catalog);
            org.scaledl.model.PredictorTrainer.Builder b = RuntimePredictor.builder().name("scaledl-device").seed(seed)
                    .layerCost(LayerCost.device(d.operators())).collectives(d.collectives());
            if (profiled != null) {
                List<OpMeasurement> rows = KernelTables.neusight(profiled, catalog);
                if (rows.isEmpty()) {
                    // KernelTables reports a folder without tables; these tables hold no rows
                    throw new IllegalArgumentException("the kernel tables in " + profiled + " hold no measurements");
                }
                b.adaptTo(rows);
            }
            List<Sample> runs = new java.util.ArrayList<>(d.samples(r -> r.parallelism().ranks() == 1 && !r.fusion()));
            runs.addAll(d.megatronRuns());
            progress.update(1, 2, String.format(Locale.ROOT, "fitting the layer model on %d kernels, calibrating on %d "
                    + "runs and fitting the Megatron model on %d (about 15 s on 2 cores)", d.operators().size(),
                    runs.size() - d.megatronRuns().size(), d.megatronRuns().size()));
            RuntimePredictor p = b.build().fit(runs);
            progress.update(2, 2, "fitted");
            p.save(out);
            DeviceLayerModel m = p.deviceLayerModel().orElseThrow();
            double cv = p.provenance().cvMre();
            int megatron = d.megatronRuns().size();
            String megatronMre = p.provenance().config().getOrDefault("megatron_cv_mre", "NaN");
            System.out.printf(Locale.ROOT, "fitted the device layer model on %d GPUs; calibrated on %d runs of "
                    + "imported graphs (inference x%.3f, training x%.3f; %s)%s%s, wrote %s%n", m.devices().size(),
                    runs.size() - megatron, m.factor(Phase.INFER), m.factor(Phase.TRAIN), Double.isNaN(cv)
                            ? "runs of fewer than 3 GPUs, no cross-validated MRE"
                            : String.format(Locale.ROOT, "MRE %.1f%% with each run's GPU left out of the calibration",
                                    100 * cv),
                    megatron == 0 ? "" : String.format(Locale.ROOT, " and the Megatron model on %d transformer "
                            + "runs (MRE %.1f%% with each model left out)", megatron,
                            100 * Double.parseDouble(megatronMre)),
                    profiled == null ? "" : "; adapted to the kernels in " + profiled, out);
            return 0;
        }
        if (devices != null || profiled != null) {
            throw new IllegalArgumentException("--devices and --profiled need --gpu");
        }
        Dataset d = readAll();
        if (attention && !gnn) {
            throw new IllegalArgumentException("--attention needs --gnn");
        }
        org.scaledl.model.PredictorTrainer.Builder b = RuntimePredictor.builder().seed(seed);
        if (gnn) {
            b.interactions(new GnnInteractions().withAttention(attention));
        }
        RuntimePredictor p = b.build().fit(d.samples());
        p.save(out);
        System.out.printf(Locale.ROOT, "fitted %s on %d samples (%s), wrote %s%n", p, d.size(),
                Reports.cvMre(p.provenance().cvMre()), out);
        String leftOut = p.provenance().config().get(LayerCost.LEFT_OUT);
        if (leftOut != null) {
            System.out.println("left out of the fit, as runs no model explains (each at least a factor of 5 off the "
                    + "fit of the others; check them): " + leftOut);
        }
        return 0;
    }

    /** The runs of every --data folder, in order. */
    private Dataset readAll() {
        Dataset d = DatasetReader.read(dataDirs.get(0));
        for (Path more : dataDirs.subList(1, dataDirs.size())) {
            d = d.plus(DatasetReader.read(more));
        }
        return d;
    }
}
