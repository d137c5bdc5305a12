package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twelve of hostile input: the evaluation commands ({@code evaluate-machines}, {@code evaluate-comm},
 * {@code evaluate-gpu}, {@code learning-curve}, {@code demo}, {@code bench}, {@code devices}), as a probe found them
 * failing late (after a minute of work, with half the output written), with an internal error, or taking absurd
 * input. Each case is now refused before the work, naming the option, file or line.
 */
class RoundTwelveCliTest {
    private static Path repo() {
        return HostileCliTest.repo();
    }

    private static void refused(MainTest.Run r, int code, String... parts) {
        assertEquals(code, r.code(), r.err());
        assertTrue(r.err().startsWith("scaledl: error: "), r.err());
        for (String p : parts) {
            assertTrue(r.err().contains(p), "'" + p + "' in " + r.err());
        }
    }

    /** DeepBench's all-reduce table with one field of one row (1-based, as the file's line less one) replaced. */
    private static Path allReduce(Path dir, String name, int row, String column, String value) throws Exception {
        List<String> lines = Files.readAllLines(repo().resolve("datasets/deepbench/allreduce.csv"));
        List<String> header = List.of(lines.get(0).split(",", -1));
        int c = header.indexOf(column);
        List<String> out = new ArrayList<>(lines);
        if (row > 0) {
            // the fields before the quoted ones are plain: replace by position
            String[] f = lines.get(row).split(",", -1);
            f[c] = value;
            out.set(row, String.join(",", f));
        }
        Path file = dir.resolve(name);
        Files.write(file, row < 0 ? List.of(lines.get(0)) : out);
        return file;
    }

    @Test
    void evaluateCommRefusesAbsurdAndInconsistentRowsAtTheirLine(@TempDir Path dir) throws Exception {
        refused(MainTest.run("evaluate-comm", "--data", allReduce(dir, "bytes.csv", 100, "bytes", "1e300").toString()),
                Main.BAD_INPUT, "bytes.csv:101", "bytes must be a number in");
        refused(MainTest.run("evaluate-comm", "--data", allReduce(dir, "nodes.csv", 100, "nodes", "3").toString()),
                Main.BAD_INPUT, "nodes.csv:101", "do not make 3 nodes");
        refused(MainTest.run("evaluate-comm", "--data", allReduce(dir, "elems.csv", 100, "elements", "7")
                .toString()), Main.BAD_INPUT, "elems.csv:101", "are not 1, 2, 4 or 8 times the 7 elements");
        refused(MainTest.run("evaluate-comm", "--data", allReduce(dir, "slow.csv", 100, "time_ms", "1e300")
                .toString()), Main.BAD_INPUT, "slow.csv:101", "is no all-reduce's time");
        refused(MainTest.run("evaluate-comm", "--data", allReduce(dir, "zero.csv", 100, "time_ms", "0").toString()),
                Main.BAD_INPUT, "zero.csv:101", "time_ms");
        refused(MainTest.run("evaluate-comm", "--data", allReduce(dir, "header.csv", -1, "", "").toString()),
                Main.BAD_INPUT, "header.csv", "no rows");
        Path good = allReduce(dir, "good.csv", 0, "bytes", "");
        refused(MainTest.run("evaluate-comm", "--data", good.toString(), "--train-max-ranks", "0"), Main.USAGE,
                "--train-max-ranks must be 2 or more");
        refused(MainTest.run("evaluate-comm", "--data", good.toString(), "--train-max-ranks", "1000"), Main.USAGE,
                "--train-max-ranks 1000", "its largest has 32");
        assertEquals(0, MainTest.run("evaluate-comm", "--data", good.toString()).code());
    }

    @Test
    void evaluateCommRefusesACopiedRowAndTakesARepeatedMeasurement(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(good(dir)));
        lines.add(lines.get(100));
        Path copied = dir.resolve("copied.csv");
        Files.write(copied, lines);
        refused(MainTest.run("evaluate-comm", "--data", copied.toString()), Main.BAD_INPUT,
                "copied.csv:" + lines.size(), "repeats line 101 in every column");
        // the same all-reduce measured again (another time) is a second measurement, taken
        String[] f = lines.get(100).split(",", -1);
        int c = List.of(lines.get(0).split(",", -1)).indexOf("time_ms");
        f[c] = String.valueOf(Double.parseDouble(f[c]) * 1.01);
        lines.set(lines.size() - 1, String.join(",", f));
        Path again = dir.resolve("again.csv");
        Files.write(again, lines);
        assertEquals(0, MainTest.run("evaluate-comm", "--data", again.toString()).code());
    }

    private static Path good(Path dir) throws Exception {
        return allReduce(dir, "good.csv", 0, "bytes", "");
    }

    @Test
    void evaluateMachinesChecksItsOptionsBeforeFitting(@TempDir Path dir) throws Exception {
        String ddp = repo().resolve("datasets/cpu-ddp").toString();
        String zoo = repo().resolve("datasets/cpu-zoo").toString();
        // a k one direction takes and the other cannot: refused before the first fit, naming --k and the machine
        refused(MainTest.run("evaluate-machines", "--a", ddp, "--b", zoo, "--k", "1000", "--repeats", "1"),
                Main.USAGE, "--k: k must be in 0..", "a larger k measures every family");
        refused(MainTest.run("evaluate-machines", "--a", ddp, "--b", ddp + "/", "--k", "0"), Main.USAGE,
                "is the --a folder");
        refused(MainTest.run("evaluate-machines", "--a", ddp, "--b", zoo, "--repeats", "100000000"), Main.USAGE,
                "--repeats must be in 1..1000");
        // a dataset without a machine is bad input, its folder named
        Path nameless = dir.resolve("nameless");
        MainTest.smallDataset(nameless);
        Files.deleteIfExists(nameless.resolve("machine.json"));
        refused(MainTest.run("evaluate-machines", "--a", nameless.toString(), "--b", zoo, "--k", "0"),
                Main.BAD_INPUT, nameless.toString(), "its runs name no machine");
    }

    /** A machine's dataset of the bundled runs of some families at 64 pixels, {@code limit} runs of each at most. */
    private static Path machine(Path dir, String name, java.util.Map<String, Integer> limit) throws Exception {
        Path src = repo().resolve("datasets/cpu-ddp");
        Files.createDirectories(dir.resolve("graphs"));
        List<String> lines = Files.readAllLines(src.resolve("runs.csv"));
        StringBuilder runs = new StringBuilder(lines.get(0)).append('\n');
        java.util.Map<String, Integer> taken = new java.util.HashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            String model = line.substring(0, line.indexOf(','));
            if (limit.containsKey(model) && line.contains("_r64.onnx")
                    && taken.merge(model, 1, Integer::sum) <= limit.get(model)) {
                runs.append(line).append('\n');
                Path g = dir.resolve("graphs/" + model + "_r64.onnx");
                if (!Files.exists(g)) {
                    Files.copy(src.resolve("graphs/" + model + "_r64.onnx"), g);
                }
            }
        }
        Files.writeString(dir.resolve("runs.csv"), runs.toString());
        Files.writeString(dir.resolve("machine.json"), "{\"name\": \"" + name + "\", \"cpus\": 2}\n");
        return dir;
    }

    /**
     * A choice of k runs that measures every family scores nothing: it is left out of the mean and counted (the
     * report said "over 8 choices" of a mean over fewer, and the runs scored per choice counted it as none); a k every
     * choice of which measures them all prints n/a (JSON null). A target too small to score its own model with each
     * family held out is refused naming its folder.
     */
    @Test
    void choicesThatScoreNothingAreCountedApart(@TempDir Path dir) throws Exception {
        int all = 1000;
        Path a = machine(dir.resolve("A"), "lab A", java.util.Map.of("resnet18", all, "squeezenet1_1", all,
                "mobilenet_v2", all));
        Path b = machine(dir.resolve("B"), "lab B", java.util.Map.of("resnet18", all, "squeezenet1_1", 2));
        int size = (int) Files.readAllLines(b.resolve("runs.csv")).size() - 1;
        MainTest.Run r = MainTest.run("evaluate-machines", "--a", a.toString(), "--b", b.toString(), "--k",
                "3," + (size - 2), "--repeats", "8", "--json");
        assertEquals(0, r.code(), r.err());
        com.fasterxml.jackson.databind.JsonNode points = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(r.out()).get("directions").get(0).get("points");
        com.fasterxml.jackson.databind.JsonNode some = points.get(0);
        int kept = some.get("choices").asInt();
        assertTrue(kept > 0 && kept < 8, "of 8 choices of 3 runs, some measure both families: " + some);
        // a kept choice scores the unmeasured family's runs: at least the smaller family's 2
        assertTrue(some.get("scored").asDouble() >= 2, some.toString());
        com.fasterxml.jackson.databind.JsonNode none = points.get(1);
        assertEquals(0, none.get("choices").asInt(), none.toString());
        assertTrue(none.get("mre").isNull() && none.get("scored").isNull(), none.toString());
        MainTest.Run text = MainTest.run("evaluate-machines", "--a", a.toString(), "--b", b.toString(), "--k",
                "3," + (size - 2), "--repeats", "8");
        assertTrue(text.out().contains("over " + kept + " of 8 choices; " + (8 - kept) + " measured every family"),
                text.out());
        assertTrue(text.out().contains(String.format("k = %3d runs: n/a", size - 2)), text.out());
        Path tiny = machine(dir.resolve("C"), "lab C", java.util.Map.of("resnet18", all, "squeezenet1_1", 1));
        refused(MainTest.run("evaluate-machines", "--a", a.toString(), "--b", tiny.toString(), "--k", "0"),
                Main.BAD_INPUT, tiny.toString(), "1 outside the largest");
        // folders that do not exist are not one folder compared with itself
        refused(MainTest.run("evaluate-machines", "--a", dir.resolve("nope").toString(), "--b",
                dir.resolve("nope").toString()), Main.BAD_INPUT);
    }

    @Test
    void outputsAreCheckedBeforeTheWork(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("demo");
        Files.createDirectories(out.resolve("predictions.csv"));
        MainTest.Run demo = MainTest.run("demo", "--data", repo().resolve("datasets/cpu-ddp").toString(), "--out-dir",
                out.toString());
        refused(demo, Main.IO, "predictions.csv", "it is a directory");
        assertFalse(demo.out().contains("leave-one-family-out"), "nothing evaluated: " + demo.out());
        assertFalse(Files.exists(out.resolve("predicted-vs-measured.svg")), "nothing written");
        Path data = dir.resolve("small");
        MainTest.smallDataset(data);
        Path file = data.resolve("runs.csv");
        refused(MainTest.run("learning-curve", "--data", data.toString(), "--out-dir", file.toString()),
                Main.IO, file + " is a file, not a folder");
        refused(MainTest.run("learning-curve", "--data", data.toString(), "--random-seeds", "1000000000"),
                Main.USAGE, "--random-seeds must be in 1..1000");
        refused(MainTest.run("learning-curve", "--data", data.toString(), "--prior", "bogus"), Main.USAGE,
                "--prior bogus: neither a file nor a bundled model");
        refused(MainTest.run("demo", "--data", dir.resolve("nowhere").toString()), Main.BAD_INPUT,
                "dataset folder", "not found");
        refused(MainTest.run("evaluate", "--data", data.toString(), "--cv", "family", "--folds", "1"), Main.USAGE,
                "--folds must be 0 (leave one group out) or 2 or more, got 1");
        refused(MainTest.run("learning-curve", "--data", data.toString(), "--folds", "-1"), Main.USAGE,
                "--folds must be 0");
    }

    @Test
    void benchChecksWhatItReadsBeforeTimingAnything(@TempDir Path dir) throws Exception {
        // a dataset without the benchmark's query graphs: said at once, naming the missing graph
        MainTest.smallDataset(dir);
        refused(MainTest.run("bench", "--quick", "--data", dir.toString()), Main.BAD_INPUT,
                "bench times the query graphs", "squeezenet1_1_r112.onnx is missing");
        refused(MainTest.run("bench", "--quick", "--data", repo().resolve("datasets/cpu-ddp").toString(),
                "--gpu-model", dir.resolve("none.sdl").toString()), Main.USAGE, "--gpu-model", "no such file");
        refused(MainTest.run("bench", "--quick", "--data", repo().resolve("datasets/cpu-ddp").toString(),
                "--gpu-model", "cpu-ddp"), Main.USAGE, "--gpu-model cpu-ddp: a model of CPU machines");
        // plan's model option names itself as typed
        refused(MainTest.run("plan", "--data", dir.toString(), "--runs", "2", "--model", "gpux"), Main.USAGE,
                "--model gpux: neither a file nor a bundled model");
        refused(MainTest.run("plan", "--data", dir.toString(), "--runs", "2", "--prior", "gpux"), Main.USAGE,
                "--prior gpux: neither a file nor a bundled model");
    }

    @Test
    void evaluateGpuSaysAHeldOutGpuItCannotReadAtOnce() throws Exception {
        String gpu = repo().resolve("scaledl-core/src/test/resources/gpu").toString();
        refused(MainTest.run("evaluate-gpu", "--data", gpu, "--holdout-gpu", "Voodoo2"), Main.USAGE,
                "--holdout-gpu", "Voodoo2");
        refused(MainTest.run("evaluate-gpu", "--data", gpu, "--adapt", "-1"), Main.USAGE, "--adapt must be in 0..");
        refused(MainTest.run("evaluate-gpu", "--data", gpu, "--adapt-runs", "1000000"), Main.USAGE,
                "--adapt-runs must be in 0..");
    }

    @Test
    void inspectSaysAllowPartialChangesNothing() throws Exception {
        MainTest.Run r = MainTest.run("inspect", MainTest.graph("squeezenet1_1_r64").toString(), "--allow-partial");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("--allow-partial changes nothing here"), r.err());
        assertFalse(MainTest.run("inspect", MainTest.graph("squeezenet1_1_r64").toString()).err()
                .contains("--allow-partial"));
    }

    @Test
    void evaluateClustersBoundsItsDrawsBeforeReading() throws Exception {
        refused(MainTest.run("evaluate-clusters", "--calibration", "--draws", "1000000000"), Main.USAGE,
                "--draws must be in 1..1000");
        refused(MainTest.run("evaluate-clusters", "--calibration", "--draws", "0"), Main.USAGE,
                "--draws must be in 1..1000");
        // --draws is the learning curve's too (cli.md's `--learning-curve --draws 3` was refused as --calibration's)
        refused(MainTest.run("evaluate-clusters", "--learning-curve", "--draws", "0"), Main.USAGE,
                "--draws must be in 1..1000");
        refused(MainTest.run("evaluate-clusters", "--draws", "3"), Main.USAGE,
                "--draws is an option of --calibration or --learning-curve");
    }

    @Test
    void aDeviceCatalogOfNoRowsIsSaid(@TempDir Path dir) throws Exception {
        Path empty = dir.resolve("mine.csv");
        Files.writeString(empty, "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS\n");
        MainTest.Run r = MainTest.run("devices", "--devices", empty.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("mine.csv: a header and no rows"), r.err());
    }
}
