package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twenty-six, hostile input: a user's device row whose architecture or form factor the catalog does not know,
 * whose board power reads as kW or whose NVLink reads as TB/s is said at its line (the FP8 weights' copies, the tensor
 * memory accelerator and the power cap read them); a candidate table's GPU rows without a precision are said to be
 * predicted in FP32; a measured point of a GPU no one described is refused by {@code scaling}; {@code half} and
 * {@code mixed} are refused as precisions.
 */
class RoundTwentySixCliTest {
    private static final Path LLAMA = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b");
    private static final String HEADER = "name,architecture,form_factor,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,"
            + "l2_MB,fp32_vector_TFLOPS,bf16_TFLOPS,fp8_TFLOPS,link_kind,link_GBps,pcie_GBps,tdp_W\n";

    /** A B200-like row of a user's file with its description's cells. */
    private static String row(String name, String architecture, String form, String link, double linkGBps,
            double tdp) {
        return name + "," + architecture + "," + form + ",180,8000,148,1965,126,75,2250,4500," + link + ","
                + (linkGBps > 0 ? linkGBps : "") + ",63," + tdp + "\n";
    }

    @Test
    void aDeviceRowsDescriptionTheCatalogDoesNotKnowIsSaidAtItsLine(@TempDir Path dir) throws Exception {
        Path devices = dir.resolve("mine.csv");
        Files.writeString(devices, HEADER
                + row("Card A", "Blackwell", "PCI-E", "none", 0, 600)
                + row("Card B", "NVIDIA Blackwell", "SXM6", "NVLink5", 900, 1000)
                + row("Card C", "Feynman", "Workstation", "NVLink5", 0.9, 1)
                + row("Card D", "", "SXM6", "NVLink5", 900, 1000));
        MainTest.Run r = MainTest.run("devices", "--devices", devices.toString(), "--json");
        assertEquals(0, r.code(), r.err());
        Map<String, JsonNode> byName = new HashMap<>();
        new ObjectMapper().readTree(r.out()).forEach(d -> byName.put(d.get("name").asText(), d));
        // a PCIe card however its form factor is punctuated: one layout only, a transposed FP8 copy
        assertFalse(byName.get("Card A").get("fp8_either_layout").asBoolean());
        // the vendor's name before the generation's is dropped: a Blackwell board
        assertEquals("Blackwell", byName.get("Card B").get("architecture").asText());
        assertTrue(byName.get("Card B").get("fp8_either_layout").asBoolean()
                && byName.get("Card B").get("tensor_memory_accelerator").asBoolean());
        String err = r.err();
        assertFalse(err.contains("mine.csv:2:") || err.contains("mine.csv:3:"), err);
        assertTrue(err.contains("mine.csv:4: architecture 'Feynman' of 'Card C' is none the catalog knows"), err);
        assertTrue(err.contains("mine.csv:4: form_factor 'Workstation' of 'Card C' is none the catalog knows"), err);
        assertTrue(err.contains("mine.csv:4: tdp_W 1.00 of 'Card C' is below any GPU board's")
                && err.contains("kW written as W?"), err);
        assertTrue(err.contains("mine.csv:4: link_GBps 0.900 of 'Card C' (NVLink5) is below its PCIe's 63.0 GB/s"),
                err);
        assertTrue(err.contains("mine.csv:5: 'Card D' has 8-bit matrix units but no architecture"), err);
    }

    /**
     * The bundled catalog's own rows, read as a user's file is, say nothing (a row of the same reading that does is
     * captured alike: the capture is checked).
     */
    @Test
    void theBundledCatalogsRowsSayNothing(@TempDir Path dir) throws Exception {
        Path bundled = HostileCliTest.repo().resolve("scaledl-core/src/main/resources/org/scaledl/io/gpu_catalog.csv");
        Path odd = dir.resolve("odd.csv");
        Files.writeString(odd, HEADER + row("Card C", "Feynman", "SXM6", "NVLink5", 900, 1000));
        String[] said = new String[2];
        Path[] files = {bundled, odd};
        for (int i = 0; i < 2; i++) {
            java.io.PrintStream old = System.err;
            java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
            System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
            try {
                assertFalse(org.scaledl.io.DeviceCatalog.read(files[i]).devices().isEmpty());
            } finally {
                System.setErr(old);
            }
            said[i] = err.toString(java.nio.charset.StandardCharsets.UTF_8);
        }
        assertTrue(said[1].contains("architecture 'Feynman'"), said[1]);
        assertEquals("", said[0]);
    }

    @Test
    void aCandidateTablesGpuRowsWithoutAPrecisionAreSaidToRunInFp32(@TempDir Path dir) throws Exception {
        RoundTwentyFiveCliTest.llamaBeside(dir);
        Path table = dir.resolve("t.csv");
        Files.writeString(table, "transformer,device,seq,batch,world_size\nm/config.json,B200,4096,1,8\n"
                + "m/config.json,B200,4096,2,8\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("t.csv:2: no precision (no precision cell, and no default given): this GPU row "
                + "and any other without one are predicted in fp32"), r.err());
        // once a table
        assertEquals(r.err().indexOf("predicted in fp32"), r.err().lastIndexOf("predicted in fp32"), r.err());
        // a default or the column: nothing said
        assertFalse(MainTest.run("predict", "--model", "gpu", "--candidates", table.toString(), "--precision",
                "bf16").err().contains("no precision"));
        // plan reads the table alike
        MainTest.Run plan = MainTest.run("plan", "--model", "gpu", "--candidates", table.toString(), "--runs", "1",
                "--out", dir.resolve("p.csv").toString());
        assertTrue(plan.err().contains("no precision"), plan.err());
    }

    @Test
    void aMeasuredPointOfAGpuNoOneDescribedIsRefusedByScaling(@TempDir Path dir) throws Exception {
        Path measured = dir.resolve("points.csv");
        Files.writeString(measured, "gpus,batch,measured_ms,device\n8,1,2600,Foo\n");
        MainTest.Run r = MainTest.run("scaling", "--model", "gpu", "--transformer",
                LLAMA.resolve("config.json").toString(), "--seq", "8192", "--batch", "1", "--micro-batches", "8",
                "--device", "B200", "--precision", "fp8", "--recompute", "none", "--gpus", "8,16", "--measured",
                measured.toString(), "--out", dir.resolve("s.svg").toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("points.csv:2") && r.err().contains("device Foo is not the sweep's job's"),
                r.err());
        // the sweep's GPU under another of its names is its own
        Files.writeString(measured, "gpus,batch,measured_ms,device\n8,1,2600,NVIDIA B200\n");
        r = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.resolve("config.json").toString(),
                "--seq", "8192", "--batch", "1", "--micro-batches", "8", "--device", "B200", "--precision", "fp8",
                "--recompute", "none", "--gpus", "8,16", "--measured", measured.toString(), "--out",
                dir.resolve("s.svg").toString());
        assertEquals(0, r.code(), r.err());
        // a short name of the sweep's GPU, as --device takes it, and a CPU model's machine are their own
        Files.writeString(measured, "gpus,batch,measured_ms,device\n8,1,2600,PRO 6000\n");
        r = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.resolve("config.json").toString(),
                "--seq", "2048", "--batch", "1", "--micro-batches", "8", "--device", "PRO 6000", "--precision",
                "bf16", "--recompute", "full", "--gpus", "8,16", "--measured", measured.toString(), "--out",
                dir.resolve("s.svg").toString());
        assertEquals(0, r.code(), r.err());
        Files.writeString(measured, "world_size,batch,measured_ms,device\n1,8,100,AMD EPYC 2-core VM\n");
        r = MainTest.run("scaling", "--model", "cpu-ddp", "--graph", MainTest.graph("resnet18_r64").toString(),
                "--batch", "8", "--gpus", "1,2", "--batches", "8", "--device", "AMD EPYC 2-core VM", "--measured",
                measured.toString(), "--out", dir.resolve("c.svg").toString());
        assertEquals(0, r.code(), r.err());
    }

    /**
     * FP8 weights as a run's parameters ({@code fp8_param_gather True}) are read from a log into the row's
     * {@code fp8_param_gather} column; where the job cannot run them as the model does (no distributed optimizer) they
     * are said and left out.
     */
    @Test
    void aLogsFp8ParamGatherIsRead(@TempDir Path dir) throws Exception {
        Path logs = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs");
        java.util.List<String> lines = new java.util.ArrayList<>(Files.readAllLines(logs.resolve(
                "megatron-llama3-8b.log")));
        int at = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).matches("\\s*fp8 \\.+ None")) {
                at = i;
            }
        }
        lines.set(at, lines.get(at).replace("None", "hybrid"));
        lines.add(at + 1, "  fp8_param_gather ................................ True");
        Path log = dir.resolve("fp8.log");
        Files.write(log, lines);
        MainTest.Run r = MainTest.run("runs", "--from-log", log.toString(), "--out", dir.resolve("o.csv").toString());
        assertEquals(0, r.code(), r.err());
        java.util.List<String> rows = Files.readAllLines(dir.resolve("o.csv"));
        int col = java.util.List.of(rows.get(0).split(",", -1)).indexOf("fp8_param_gather");
        assertEquals("true", rows.get(1).split(",", -1)[col], rows.toString());
        assertFalse(r.err().contains("fp8_param_gather"), r.err());
        // without the distributed optimizer: said, and left out
        java.util.List<String> noDo = new java.util.ArrayList<>(lines);
        noDo.replaceAll(l -> l.matches("\\s*use_distributed_optimizer \\.+ True") ? l.replace("True", "False")
                : l);
        Files.write(log, noDo);
        r = MainTest.run("runs", "--from-log", log.toString(), "--out", dir.resolve("o.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("fp8.log:" + (at + 2) + ": fp8_param_gather True is left out of the row: FP8 "
                + "weights as the parameters (fp8_param_gather) are gathered by the distributed optimizer"), r.err());
        rows = Files.readAllLines(dir.resolve("o.csv"));
        assertEquals("false", rows.get(1).split(",", -1)[col], rows.toString());
    }

    /**
     * {@code --fp8-param-gather}: said in the prediction's job, 2 bytes a weight less memory; refused with BF16;
     * {@code layouts} searches the distributed optimizer's stage 1 with it and writes the column, which rescoring
     * reads back to the same figures; a candidate table's default applies to the rows that can run it only.
     */
    @Test
    void fp8ParamGatherFromTheCommandLineAndTables(@TempDir Path dir) throws Exception {
        String[] job = {"predict", "--model", "gpu", "--transformer", LLAMA.resolve("config.json").toString(), "--seq",
            "4096", "--batch", "1", "--micro-batches", "8", "--world-size", "8", "--zero-stage", "1", "--device",
            "B200", "--precision", "fp8", "--recompute", "none", "--json"};
        MainTest.Run off = MainTest.run(job);
        java.util.List<String> with = new java.util.ArrayList<>(java.util.List.of(job));
        with.add("--fp8-param-gather");
        MainTest.Run on = MainTest.run(with.toArray(String[]::new));
        assertEquals(0, on.code(), on.err());
        ObjectMapper om = new ObjectMapper();
        JsonNode a = om.readTree(off.out());
        JsonNode b = om.readTree(on.out());
        assertTrue(b.get("workload").get("fp8_param_gather").asBoolean()
                && !a.get("workload").get("fp8_param_gather").asBoolean());
        // Llama 3 8B's blocks: 32 layers of 4096 x (6144 + 4096 + 2 x 14336 + 14336) weights, 2 bytes each
        double blocks = 32.0 * 4096 * (6144 + 4096 + 3 * 14336);
        assertEquals(2 * blocks / (1L << 30), a.get("memory_gb").asDouble() - b.get("memory_gb").asDouble(), 1e-2);
        with.set(with.indexOf("fp8"), "bf16");
        MainTest.Run bf16 = MainTest.run(with.toArray(String[]::new));
        assertEquals(Main.BAD_INPUT, bf16.code(), bf16.err());
        assertTrue(bf16.err().contains("need an FP8 recipe"), bf16.err());
        // layouts: stage 1 alone, the column written and read back alike
        Path out = dir.resolve("l.csv");
        MainTest.Run l = MainTest.run("layouts", "--model", "gpu", "--transformer", LLAMA.resolve("config.json")
                .toString(), "--seq", "4096", "--gpus", "16", "--global-batch", "32", "--device", "B200",
                "--precision", "fp8", "--fp8-param-gather", "--out", out.toString());
        assertEquals(0, l.code(), l.err());
        java.util.List<String> rows = Files.readAllLines(out);
        java.util.List<String> header = java.util.List.of(rows.get(0).split(",", -1));
        for (String row : rows.subList(1, rows.size())) {
            String[] cells = row.split(",", -1);
            assertEquals("true", cells[header.indexOf("fp8_param_gather")], row);
            assertEquals("1", cells[header.indexOf("zero_stage")], row);
        }
        Path scored = dir.resolve("s.csv");
        assertEquals(0, MainTest.run("predict", "--model", "gpu", "--candidates", out.toString(), "--out",
                scored.toString()).code());
        java.util.List<String> back = Files.readAllLines(scored);
        java.util.List<String> h2 = java.util.List.of(back.get(0).split(",", -1));
        String[] first = back.get(1).split(",", -1);
        assertEquals(Double.parseDouble(first[h2.indexOf("layout_ms")]), Double.parseDouble(first[h2.indexOf(
                "predicted_ms")]), 1e-3);
        // a table's default: on the FP8 row with the distributed optimizer, not on the BF16 one
        RoundTwentyFiveCliTest.llamaBeside(dir);
        Path table = dir.resolve("t.csv");
        Files.writeString(table, "transformer,device,seq,batch,world_size,zero_stage,precision\n"
                + "m/config.json,B200,4096,1,8,1,fp8\nm/config.json,B200,4096,1,8,1,bf16\n");
        Path tout = dir.resolve("t-out.csv");
        MainTest.Run t = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString(),
                "--fp8-param-gather", "--out", tout.toString());
        assertEquals(0, t.code(), t.err());
        Path given = dir.resolve("g.csv");
        Files.writeString(given, "transformer,device,seq,batch,world_size,zero_stage,precision,fp8_param_gather\n"
                + "m/config.json,B200,4096,1,8,1,fp8,true\nm/config.json,B200,4096,1,8,1,bf16,false\n");
        Path gout = dir.resolve("g-out.csv");
        assertEquals(0, MainTest.run("predict", "--model", "gpu", "--candidates", given.toString(), "--out",
                gout.toString()).code());
        java.util.function.Function<Path, java.util.List<String>> memory = f -> {
            try {
                java.util.List<String> ls = Files.readAllLines(f);
                int c = java.util.List.of(ls.get(0).split(",", -1)).indexOf("memory_gb");
                return ls.subList(1, ls.size()).stream().map(x -> x.split(",", -1)[c]).toList();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
        assertEquals(memory.apply(gout), memory.apply(tout));
    }

    /**
     * NVFP4 on an AMD GPU is said to be predicted as NVIDIA's format on its FP4 units (they run OCP MX-FP4); a
     * catalog column in another case is named with the column it likely means.
     */
    @Test
    void nvfp4OnAnAmdGpuAndAPeakColumnInAnotherCaseAreSaid(@TempDir Path dir) throws Exception {
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA.resolve("config.json")
                .toString(), "--seq", "4096", "--batch", "1", "--device", "MI355X", "--precision", "nvfp4");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("NVFP4 (16-element blocks, E4M3 scales) is NVIDIA's format: AMD Instinct "
                + "MI355X's FP4 units run OCP MX-FP4"), r.err());
        assertFalse(MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA.resolve("config.json").toString(),
                "--seq", "4096", "--batch", "1", "--device", "B200", "--precision", "nvfp4").err().contains("MX-FP4"));
        Path devices = dir.resolve("upper.csv");
        Files.writeString(devices, "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS,"
                + "bf16_TFLOPS,FP8_TFLOPS,architecture\nX1,80,3350,132,1980,50,66.9,989,1979,Hopper\n");
        MainTest.Run d = MainTest.run("devices", "--devices", devices.toString());
        assertTrue(d.err().contains("column 'FP8_TFLOPS' is the peak of no precision scaledl predicts (did you mean "
                + "'fp8_TFLOPS'?"), d.err());
    }

    @Test
    void halfAndMixedAreRefusedAsPrecisions() {
        for (String[] p : new String[][] {{"half", "model.half()"}, {"mixed", "names no 16-bit type"}}) {
            MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer",
                    LLAMA.resolve("config.json").toString(), "--seq", "2048", "--batch", "1", "--device", "H100",
                    "--precision", p[0]);
            assertTrue(r.code() != 0 && r.err().contains(p[1]), r.err());
        }
    }
}
