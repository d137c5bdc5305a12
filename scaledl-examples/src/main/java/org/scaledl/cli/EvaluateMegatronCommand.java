package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.eval.MegatronEvaluation;
import org.scaledl.io.GpuData;
import org.scaledl.model.LayerCost;
import org.scaledl.model.RuntimePredictor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl evaluate-megatron --data datasets/gpu}: the Megatron execution model fitted on some of vTrain's runs
 * and scored on the others (each model held out, fewer GPUs to eight, one hidden size to the other, each depth held
 * out).
 */
@Command(name = "evaluate-megatron", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Fit the Megatron execution model on some of the vTrain runs (3D-parallel GPT training on 8 "
                + "A100s) and score the others: each model held out, fewer GPUs -> 8, hidden 1,024 <-> 2,048, each "
                + "layer count held out.")
final class EvaluateMegatronCommand implements Callable<Integer> {
    @Option(names = "--data", defaultValue = "datasets/gpu", description = "GPU data root (default "
            + "${DEFAULT-VALUE})")
    Path data;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Option(names = "--out", description = "Write every scored run's prediction to this CSV (split, the run's "
            + "source line, model, GPUs, tensor, pipeline and data parallelism, sequences a micro-batch, global batch, "
            + "measured and predicted ms, relative error)")
    Path out;

    /**
     * The device predictor a GPU data root gives without its transformer runs: the layer model on the kernels, the
     * eager runs' calibration and the collectives, and no Megatron coefficients (the physics alone).
     */
    static RuntimePredictor withoutMegatron(GpuData d) {
        return RuntimePredictor.builder().name("scaledl-device").layerCost(LayerCost.device(d.operators()))
                .collectives(d.collectives()).build().fit(d.samples(r -> r.parallelism().ranks() == 1 && !r.fusion()));
    }

    @Override
    public Integer call() throws Exception {
        long t0 = System.nanoTime();
        if (out != null) {
            org.scaledl.model.file.SafeFiles.checkWritable(out);   // before the fits, not after
            Reports.requireExtension(out, "the scored runs' predictions", ".csv");
            Reports.notAnInput(out, "--data", data);
        }
        GpuData d = GpuData.read(data, Catalogs.of(null, data));
        List<org.scaledl.workload.Sample> vtrain = d.vtrainRuns();
        if (vtrain.isEmpty()) {
            throw new IllegalArgumentException(data + " has no vTrain runs (vtrain/ground_truth_single.csv)");
        }
        MegatronEvaluation e = MegatronEvaluation.run(withoutMegatron(d), vtrain);
        if (out != null) {
            writePredictions(e, out);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("runs", vtrain.size());
            root.put("seconds", seconds);
            ArrayNode arr = root.putArray("splits");
            for (MegatronEvaluation.Split s : e.splits()) {
                arr.addObject().put("name", s.name()).put("train_runs", s.trainRuns()).put("test_runs", s.testRuns())
                        .put("mre", s.mre()).put("median", s.median()).put("p90", s.p90()).put("max", s.max())
                        .put("bias", s.bias());
            }
            Reports.printJson(root);
            return 0;
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%d vTrain runs (GPT, 8 x %s, FP16, "
                + "full recomputation)%n", vtrain.size(), GpuData.VTRAIN_GPU));
        b.append(String.format(Locale.ROOT, "%-44s %7s %6s %7s %7s %7s %7s %7s%n", "split", "train", "test", "MRE",
                "median", "p90", "max", "bias"));
        for (MegatronEvaluation.Split s : e.splits()) {
            b.append(String.format(Locale.ROOT, "%-44s %7.0f %6d %6.1f%% %6.1f%% %6.1f%% %6.1f%% %+6.1f%%%n",
                    s.name(), s.trainRuns(), s.testRuns(), 100 * s.mre(), 100 * s.median(), 100 * s.p90(),
                    100 * s.max(), 100 * s.bias()));
        }
        b.append(String.format(Locale.ROOT, "(%.0f s)", seconds));
        System.out.println(b);
        return 0;
    }

    /** One row a scored run and split: where the run is, its job, measured and predicted. */
    static void writePredictions(MegatronEvaluation e, Path file) {
        StringBuilder b = new StringBuilder("split,source,model,gpus,tensor,pipeline,data,micro_batch,global_batch,"
                + "measured_ms,predicted_ms,error\n");
        for (MegatronEvaluation.Scored s : e.predictions()) {
            var w = s.run().workload();
            var par = w.parallelism();
            b.append(s.split());
            for (String tag : List.of("source", "model")) {
                b.append(',').append(org.scaledl.io.CsvTable.cell(w.tag(tag).orElse("")));
            }
            b.append(String.format(Locale.ROOT, ",%d,%d,%d,%d,%d,%d,%.4f,%.4f,%.6f\n", par.ranks(), par.tensor(),
                    par.pipeline(), par.data(), w.batch() / par.microBatches(), w.batch() * par.data(),
                    s.run().millis(), s.predicted(), s.error()));
        }
        Reports.write(file, b.toString());
    }
}
