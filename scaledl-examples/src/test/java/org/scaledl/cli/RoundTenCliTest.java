package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round ten of hostile input: {@code scaling}, {@code plan} for GPU clusters and a user's device catalog, as a probe
 * found them: an exit status that contradicted {@code predict}'s for the same job, points drawn off the canvas, a
 * plan its own next step could not read, one job planned twice, a catalog slip taken silently.
 */
class RoundTenCliTest {
    private static final Path LLAMA = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");

    private static String[] moeScaling(Path dir, String... more) throws Exception {
        Path cfg = dir.resolve("mixtral/config.json");
        Files.createDirectories(cfg.getParent());
        Files.writeString(cfg, ClusterPredictCliTest.SMALL_MOE);
        List<String> args = new java.util.ArrayList<>(List.of("scaling", "--model", "gpu", "--transformer",
                cfg.toString(), "--seq", "1024", "--batch", "1", "--micro-batches", "2", "--tensor", "2", "--expert",
                "8", "--sequence-parallel", "--device", "B200", "--precision", "bf16", "--out", dir.resolve("s.svg").toString()));
        args.addAll(List.of(more));
        return args.toArray(new String[0]);
    }

    /**
     * A swept GPU count the expert layout cannot use is bad input (exit 1, as predict says of the job) naming the
     * point, whether or not a good point came before it; a measured point of such a layout is named at its line; the
     * default sweep leaves out the replica counts the experts cannot spread over, and says so.
     */
    @Test
    void aSweepPointTheExpertsCannotUseIsNamedAsPredictRefusesIt(@TempDir Path dir) throws Exception {
        for (String gpus : new String[] {"8,12,16", "12,16"}) {
            MainTest.Run r = MainTest.run(moeScaling(dir, "--gpus", gpus));
            assertEquals(Main.BAD_INPUT, r.code(), gpus + ": " + r.err());
            assertTrue(r.err().contains("--gpus 12 (6 replicas): expert x expert tensor parallelism (8 x 1) must "
                    + "divide"), r.err());
        }
        Path points = dir.resolve("points.csv");
        Files.writeString(points, "gpus,batch,measured_ms\n8,1,500\n2,1,400\n");
        MainTest.Run bad = MainTest.run(moeScaling(dir, "--gpus", "8,16", "--measured", points.toString()));
        assertEquals(Main.BAD_INPUT, bad.code(), bad.err());
        assertTrue(bad.err().contains("points.csv:3: expert x expert tensor parallelism (8 x 1) must divide"),
                bad.err());
        MainTest.Run sweep = MainTest.run(moeScaling(dir));
        assertEquals(0, sweep.code(), sweep.err());
        assertTrue(sweep.err().contains("the default sweep leaves out 2 replica counts (1, 2) that expert x expert "
                + "tensor parallelism (8 x 1) cannot spread its experts over"), sweep.err());
        assertTrue(sweep.out().lines().anyMatch(l -> l.trim().startsWith("4        8")), sweep.out());
    }

    /**
     * A measured point outside the swept range is not drawn off the canvas: it is counted among the points the plot
     * does not show; a point inside it is drawn; one point written twice with the same time is refused however its
     * numbers are written.
     */
    @Test
    void aMeasuredPointOutsideTheSweepIsSaidNotDrawnOffTheCanvas(@TempDir Path dir) throws Exception {
        Path points = dir.resolve("points.csv");
        Files.writeString(points, "gpus,batch,measured_ms\n64,1,5000\n4,1,900\n");
        Path svg = dir.resolve("s.svg");
        MainTest.Run r = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq", "1024",
                "--batch", "1", "--tensor", "2", "--device", "H100", "--precision", "bf16", "--gpus", "2,4,8",
                "--batches", "1,2", "--measured", points.toString(), "--out", svg.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("1 measured point lies on neither sweep (batch 1 on 1 to 4 replicas, or 1 replica "
                + "at batch 1 to 2)"), r.err());
        String doc = Files.readString(svg);
        int width = Integer.parseInt(match(doc, "<svg[^>]*width=\"(\\d+)\""));
        int height = Integer.parseInt(match(doc, "<svg[^>]*height=\"(\\d+)\""));
        // the measured points' marks (the legend's have no stroke): the 4-GPU point once in the time panel (the left
        // half) and once in the throughput panel (the right half), the 64-GPU point nowhere
        Matcher m = Pattern.compile("<circle cx=\"(-?[0-9.]+)\" cy=\"(-?[0-9.]+)\" r=\"4\" fill=\"#d62728\" "
                + "stroke=\"white\"/>").matcher(doc);
        List<double[]> marks = new java.util.ArrayList<>();
        while (m.find()) {
            marks.add(new double[] {Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2))});
        }
        assertEquals(2, marks.size(), doc);
        marks.sort(java.util.Comparator.comparingDouble(x -> x[0]));
        assertTrue(marks.get(0)[0] > 0 && marks.get(0)[0] < width / 2.0, "time panel: " + marks.get(0)[0]);
        assertTrue(marks.get(1)[0] > width / 2.0 && marks.get(1)[0] < width, "throughput panel: " + marks.get(1)[0]);
        for (double[] x : marks) {
            assertTrue(x[1] > 0 && x[1] < height, "inside the chart: " + x[1]);
        }
        Files.writeString(points, "gpus,batch,measured_ms\n4,1,900\n4,1,900.0\n");
        MainTest.Run twice = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "1024", "--batch", "1", "--tensor", "2", "--device", "H100", "--precision", "bf16", "--gpus", "2,4",
                "--measured", points.toString(), "--out", svg.toString());
        assertEquals(Main.BAD_INPUT, twice.code(), twice.err());
        assertTrue(twice.err().contains("points.csv:3: the same point as line 2"), twice.err());
    }

    private static String match(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertTrue(m.find(), regex);
        return m.group(1);
    }

    /**
     * {@code scaling} does not write its chart over its measured points, names the precision in its header and says
     * once what predict says of the job (NVFP4 served as FP8 with blockwise scaling on an H100; trained, refused as
     * Transformer Engine refuses it).
     */
    @Test
    void scalingKeepsItsInputAndSaysThePrecisionItRuns(@TempDir Path dir) throws Exception {
        Path points = dir.resolve("points.svg");
        Files.writeString(points, "gpus,batch,measured_ms\n2,1,900\n");
        MainTest.Run over = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "1024", "--batch", "1", "--tensor", "2", "--device", "H100", "--precision", "bf16", "--gpus", "2,4",
                "--measured", points.toString(), "--out", points.toString());
        assertEquals(Main.USAGE, over.code(), over.err());
        assertTrue(over.err().contains("is the file --measured names"), over.err());
        assertTrue(Files.readString(points).startsWith("gpus,batch"), "the points are kept");
        MainTest.Run trained = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "1024", "--batch", "1", "--tensor", "2", "--device", "H100", "--precision", "nvfp4", "--gpus", "2,4",
                "--batches", "1", "--out", dir.resolve("t.svg").toString());
        assertEquals(Main.BAD_INPUT, trained.code(), trained.err());
        assertTrue(trained.err().contains("cannot train nvfp4") && trained.err().contains("the recipes it trains: fp8-block"),
                trained.err());
        MainTest.Run fp4 = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "1024", "--batch", "1", "--tensor", "2", "--device", "H100", "--precision", "nvfp4", "--gpus", "2,4",
                "--batches", "1", "--phase", "infer", "--out", dir.resolve("s.svg").toString());
        assertEquals(0, fp4.code(), fp4.err());
        assertTrue(fp4.out().lines().findFirst().orElseThrow().contains(" in nvfp4 on "), fp4.out());
        assertEquals(1, fp4.err().lines().filter(l -> l.contains("has no nvfp4 matrix units")).count(), fp4.err());
    }

    /**
     * A plan written outside its candidates' folder names copies of their configurations beside it, so that the
     * calibration it advises reads it; one job written two ways is one candidate (the repeat left out and said), and a
     * table that repeats a line field for field is still refused.
     */
    @Test
    void aPlanIsReadBackAndPlansNoJobTwice(@TempDir Path dir) throws Exception {
        Path in = dir.resolve("in");
        Files.createDirectories(in.resolve("llama"));
        Files.copy(LLAMA, in.resolve("llama/config.json"));
        Path jobs = in.resolve("jobs.csv");
        Files.writeString(jobs, "id,transformer,seq,batch,gpus,tensor,device,precision\n"
                + "a,llama/config.json,1024,1,8,2,H100,bf16\n"
                + "b,llama/config.json,1024,1,8,2,H100 SXM,BF16\n"
                + "c,llama/config.json,1024,1,16,2,H100,bf16\n"
                + "d,llama/config.json,2048,1,8,4,H100,bf16\n");
        Path out = dir.resolve("elsewhere/plan.csv");
        Files.createDirectories(out.getParent());
        MainTest.Run plan = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "3",
                "--out", out.toString());
        assertEquals(0, plan.code(), plan.err());
        assertTrue(plan.err().contains("1 of 4 candidates left out of the plan: the same job as an earlier line, "
                + "written another way (lines 3 (as 2))"), plan.err());
        assertTrue(plan.out().contains("chose 3 of 3 distinct candidate jobs"), plan.out());
        assertTrue(plan.err().contains("1 configuration outside the plan's folder copied beside it"), plan.err());
        List<String> rows = Files.readAllLines(out);
        assertEquals(4, rows.size(), String.join("\n", rows));
        assertFalse(rows.stream().anyMatch(r -> r.startsWith("b,")), "the repeat is not planned");
        assertTrue(rows.stream().skip(1).allMatch(r -> r.contains(",plan.configs/llama/config.json,")), rows.get(1));
        assertEquals(Files.readString(LLAMA), Files.readString(out.resolveSibling("plan.configs/llama/config.json")));
        // the plan's own advice: measure, add measured_ms, calibrate
        Path runs = out.resolveSibling("runs.csv");
        StringBuilder sb = new StringBuilder(rows.get(0)).append(",measured_ms\n");
        for (String r : rows.subList(1, rows.size())) {
            sb.append(r).append(",1000\n");
        }
        Files.writeString(runs, sb.toString());
        MainTest.Run cal = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("mine.sdl").toString());
        assertEquals(0, cal.code(), cal.err());
        MainTest.Run scored = MainTest.run("predict", "--model", "gpu", "--candidates", out.toString(), "--out",
                dir.resolve("scored.csv").toString());
        assertEquals(0, scored.code(), scored.err());
        Files.writeString(jobs, "transformer,seq,batch,gpus,tensor,device,precision\n"
                + "llama/config.json,1024,1,8,2,H100,bf16\nllama/config.json,1024,1,8,2,H100,bf16\n");
        MainTest.Run same = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "1");
        assertEquals(Main.BAD_INPUT, same.code(), same.err());
        assertTrue(same.err().contains("jobs.csv:3: the same candidate as line 2"), same.err());
    }

    /**
     * A catalog row whose 8-bit peak is below its 16-bit one is said (a slip of units makes its FP8 jobs ten times
     * slower); a misspelt column's hint is the column of the same name in another case; a table that is no catalog
     * names both layouts' key columns.
     */
    @Test
    void aCatalogSlipIsSaidAndItsHintIsTheRightColumn(@TempDir Path dir) throws Exception {
        Path dev = dir.resolve("dev.csv");
        Files.writeString(dev, "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS,bf16_TFLOPS,"
                + "fp8_TFLOPS\nMyGPU,80,2000,100,1500,40,60,1000,100\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--devices", dev.toString(), "--device", "MyGPU",
                "--transformer", LLAMA.toString(), "--seq", "256", "--batch", "1", "--precision", "fp8");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("dev.csv:2: fp8_TFLOPS 100.0 is below the 16-bit peak 1000.0 TFLOP/s of 'MyGPU'"),
                r.err());
        Path misspelt = dir.resolve("misspelt.csv");
        Files.writeString(misspelt, "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS,"
                + "bf16_TFLOPS,fp8_tflops\nMyGPU,80,2000,100,1500,40,60,1000,2000\n");
        MainTest.Run hint = MainTest.run("devices", "--devices", misspelt.toString());
        assertEquals(0, hint.code(), hint.err());
        assertTrue(hint.err().contains("column 'fp8_tflops' is not one the catalog reads (did you mean "
                + "'fp8_TFLOPS'?)"), hint.err());
        Path points = dir.resolve("points.csv");
        Files.writeString(points, "gpus,batch,measured_ms\n2,1,900\n");
        MainTest.Run not = MainTest.run("devices", "--devices", points.toString());
        assertEquals(Main.BAD_INPUT, not.code(), not.err());
        assertTrue(not.err().contains("points.csv:1: not a device catalog: no column 'name'")
                && not.err().contains("or 'gpu'"), not.err());
    }

    /**
     * What is wrong whatever the GPU count is not blamed on a sweep point (a precision the GPU lacks), a degree of 0
     * is still a usage error (it divided by zero), and two measured runs of one point and time told apart by another
     * column (an id) are both kept.
     */
    @Test
    void scalingBlamesASweepPointOnlyForItsOwnFault(@TempDir Path dir) throws Exception {
        Path svg = dir.resolve("s.svg");
        MainTest.Run fp8 = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "1024", "--batch", "1", "--tensor", "2", "--device", "A100", "--precision", "fp8", "--gpus", "2,4",
                "--out", svg.toString());
        assertEquals(Main.BAD_INPUT, fp8.code(), fp8.err());
        assertFalse(fp8.err().contains("--gpus 2"), fp8.err());
        MainTest.Run zero = MainTest.run(moeScaling(dir, "--expert-tensor", "0"));
        assertEquals(Main.USAGE, zero.code(), zero.err());
        Path points = dir.resolve("points.csv");
        Files.writeString(points, "id,gpus,batch,measured_ms\nr1,4,1,900\nr2,4,1,900\n");
        MainTest.Run two = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "1024", "--batch", "1", "--tensor", "2", "--device", "H100", "--precision", "bf16", "--gpus", "2,4",
                "--measured", points.toString(), "--out", svg.toString());
        assertEquals(0, two.code(), two.err());
    }

    /**
     * The copies beside a plan never replace a file already there with other bytes (a row may name it), and two
     * configurations of one folder name get two names; jobs that differ only where the design row sees it (the
     * network between nodes, the expert imbalance) are two candidates, counted in the JSON when repeated; a graph
     * outside the plan's folder is refused, not named by a path the table may not hold.
     */
    @Test
    void aPlansCopiesKeepWhatIsThereAndJobsThatDifferStayApart(@TempDir Path dir) throws Exception {
        Path in = dir.resolve("in");
        Files.createDirectories(in.resolve("a/llama"));
        Files.createDirectories(in.resolve("b/llama"));
        Files.copy(LLAMA, in.resolve("a/llama/config.json"));
        String other = Files.readString(LLAMA).replace("\"num_hidden_layers\": 32", "\"num_hidden_layers\": 16");
        assertFalse(other.equals(Files.readString(LLAMA)), "the second configuration differs");
        Files.writeString(in.resolve("b/llama/config.json"), other);
        Path out = dir.resolve("out/plan.csv");
        Path there = out.resolveSibling("plan.configs/llama/config.json");
        Files.createDirectories(there.getParent());
        Files.writeString(there, "{\"not\": \"this plan's\"}");
        Path jobs = in.resolve("jobs.csv");
        Files.writeString(jobs, "transformer,seq,batch,gpus,tensor,device,precision,gpus_per_node,inter_node_gbps\n"
                + "a/llama/config.json,1024,1,16,2,H100,bf16,8,3200\n"
                + "a/llama/config.json,1024,1,16,2,H100,bf16,8,400\n"
                + "b/llama/config.json,1024,1,8,2,H100,bf16,8,3200\n"
                + "b/llama/config.json,1024,1,8,2,H100 SXM,bf16,8,3200\n");
        MainTest.Run plan = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "3",
                "--out", out.toString(), "--json");
        assertEquals(0, plan.code(), plan.err());
        assertEquals(1, new com.fasterxml.jackson.databind.ObjectMapper().readTree(plan.out()).get("repeated")
                .asInt(), plan.out());
        assertEquals("{\"not\": \"this plan's\"}", Files.readString(there), "a file already there is kept");
        String table = Files.readString(out);
        assertTrue(table.contains("plan.configs/llama-2/config.json") && table.contains(
                "plan.configs/llama-3/config.json"), table);
        assertEquals(Files.readString(LLAMA), Files.readString(out.resolveSibling("plan.configs/llama-2/config.json")));
        assertEquals(other, Files.readString(out.resolveSibling("plan.configs/llama-3/config.json")));
        // a graph beside its table, the plan elsewhere
        Files.copy(HostileCliTest.repo().resolve("datasets/graphs/resnet50_r224.onnx"), in.resolve("r50.onnx"));
        Path graphs = in.resolve("graphs.csv");
        Files.writeString(graphs, "graph,batch,device,precision\nr50.onnx,8,H100,bf16\nr50.onnx,16,H100,bf16\n");
        MainTest.Run refused = MainTest.run("plan", "--model", "gpu", "--candidates", graphs.toString(), "--runs", "1",
                "--out", out.toString());
        assertEquals(Main.USAGE, refused.code(), refused.err());
        assertTrue(refused.err().contains("the plan would name the graph r50.onnx") && refused.err().contains(
                "outside its folder"), refused.err());
    }
}
