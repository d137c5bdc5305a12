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
                .toString()), Main.BAD_INPUT, "slow.csv:101", "time_ms");
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
    void aDeviceCatalogOfNoRowsIsSaid(@TempDir Path dir) throws Exception {
        Path empty = dir.resolve("mine.csv");
        Files.writeString(empty, "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS\n");
        MainTest.Run r = MainTest.run("devices", "--devices", empty.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("mine.csv: a header and no rows"), r.err());
    }
}
