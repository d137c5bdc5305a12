package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.KernelTables;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.OpMeasurement;

/**
 * Round eleven of hostile input, at the command line: a user's profiled kernels in another unit, a {@code --profiled}
 * that is no folder, and what {@code inspect} says of an adapted model.
 */
class RoundElevenCliTest {
    private static final String KERNELS = "row_id,gpu,op,B,M,N,K,flops,latency_ms,precision\n";

    /** Kernels of a GPU shaped as a user's campaign writes them, each {@code scale} times the given latency. */
    private static Path kernels(Path dir, double scale) throws Exception {
        Files.createDirectories(dir);
        StringBuilder sb = new StringBuilder(KERNELS);
        int id = 0;
        for (int n : new int[] {1024, 2048, 4096, 8192}) {
            double flops = 2.0 * n * n * n;
            // about 400 TFLOP/s: an H200's BF16 products, in milliseconds
            sb.append(id++).append(",NVIDIA H200,linear,1,").append(n).append(',').append(n).append(',').append(n)
                    .append(',').append((long) flops).append(',').append(scale * flops / 4e14 * 1e3)
                    .append(",bf16\n");
        }
        Files.writeString(dir.resolve("linear.csv"), sb.toString());
        return dir;
    }

    @Test
    void kernelsInMicrosecondsAreRefusedAndAnAdaptationIsSaid(@TempDir Path dir) throws Exception {
        DeviceCatalog catalog = DeviceCatalog.bundled();
        RuntimePredictor gpu = ModelArgument.load("gpu");
        // products in microseconds are refused as their table is read (a thousand times their roofline)
        Path us = kernels(dir.resolve("us"), 1000);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> KernelTables.neusight(us, catalog));
        assertTrue(e.getMessage().contains("times their roofline") && e.getMessage().contains("microseconds"),
                e.getMessage());
        // element-wise kernels (no roofline check as they are read) in microseconds beside products in milliseconds
        // are refused when the model is adapted: each group is checked
        Path mixed = kernels(dir.resolve("mixed"), 1);
        // element-wise additions of B x H elements (two inputs, one output in FP32) at about 4 TB/s, in microseconds
        StringBuilder elem = new StringBuilder("row_id,gpu,op,B,H,n_inputs,latency_ms\n");
        int id = 0;
        for (int b : new int[] {1024, 2048, 4096, 8192}) {
            elem.append(id++).append(",NVIDIA H200,add,").append(b).append(",8192,2,")
                    .append(1000 * 12.0 * b * 8192 / 4e12 * 1e3).append('\n');
        }
        Files.writeString(mixed.resolve("elem.csv"), elem.toString());
        List<OpMeasurement> part = KernelTables.neusight(mixed, catalog);
        InvalidInputException p = assertThrows(InvalidInputException.class, () -> gpu.adapt(part));
        assertTrue(p.getMessage().contains("profiled ELEMENTWISE") && p.getMessage().contains("times slower"),
                p.getMessage());
        // the same kernels in milliseconds adapt it, and inspect says so
        Path model = dir.resolve("h200.sdl");
        gpu.adapt(KernelTables.neusight(kernels(dir.resolve("ms"), 1), catalog)).save(model);
        MainTest.Run r = MainTest.run("inspect", "--model", model.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("adapted to 4 profiled kernels (its layer predictions corrected on NVIDIA H200)"),
                r.out());
        // its JSON gives the count as a number, as calibration_runs is
        MainTest.Run json = MainTest.run("inspect", "--model", model.toString(), "--json");
        assertEquals(0, json.code(), json.err());
        com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(json.out());
        assertTrue(root.get("adapted_kernels").isInt(), json.out());
        assertEquals(4, root.get("adapted_kernels").asInt());
        assertEquals("NVIDIA H200", root.get("adapted_devices").get(0).asText());
    }

    @Test
    void aProfiledPathThatIsNoFolderIsSaidBeforeTheDataIsRead(@TempDir Path dir) throws Exception {
        Path file = kernels(dir.resolve("k"), 1).resolve("linear.csv");
        MainTest.Run r = MainTest.run("fit", "--gpu", "--data", dir.resolve("nowhere").toString(), "--profiled",
                file.toString(), "--out", dir.resolve("x.sdl").toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("--profiled takes a folder of kernel tables"), r.err());
        MainTest.Run none = MainTest.run("fit", "--gpu", "--data", dir.resolve("nowhere").toString(), "--profiled",
                dir.resolve("missing").toString(), "--out", dir.resolve("x.sdl").toString());
        assertEquals(Main.BAD_INPUT, none.code(), none.err());
        assertTrue(none.err().contains("missing: no such folder"), none.err());
    }
}
