package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round fourteen of hostile input and the person at the keyboard, round two: a probe and a newcomer's walk through
 * the documented workflows found a calibration from throughput refused on the plan's own table, a global batch a
 * table could not say, a catalog's unit slips and a domain smaller than its node taken silently, Java's number
 * syntax read as numbers, a calibration on runs of no weight said to be done, a layout search stopped by one
 * layout, a plan whose ids its next step refuses, and messages naming what a user cannot act on. Each case here
 * fails on the code before.
 */
class RoundFourteenCliTest {
    private static final Path LLAMA_8B = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
    private static final Path LLAMA_70B = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-70b/config.json");

    /** A small Llama-style model whose jobs fit one GPU's memory. */
    private static Path small(Path dir) throws Exception {
        Path to = dir.resolve("m/config.json");
        Files.createDirectories(to.getParent());
        Files.writeString(to, "{\"model_type\": \"llama\", \"hidden_size\": 1024, \"intermediate_size\": 4096, "
                + "\"num_attention_heads\": 16, \"num_key_value_heads\": 8, \"num_hidden_layers\": 8, "
                + "\"vocab_size\": 32000, \"max_position_embeddings\": 4096}");
        return to;
    }

    private static Path model(Path dir, Path config) throws Exception {
        Path to = dir.resolve("m/config.json");
        Files.createDirectories(to.getParent());
        Files.copy(config, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return to;
    }

    /**
     * A plan's table (with its predicted_ms and cost) and a measured throughput beside them calibrate as a measured
     * step time does: the plan's predicted_ms does not make the table a scored one.
     */
    @Test
    void aPlansTableWithMeasuredThroughputCalibrates(@TempDir Path dir) throws Exception {
        small(dir);
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, "id,transformer,seq,batch,micro_batches,gpus,tensor,device,precision\n"
                + "a,m/config.json,4096,1,8,8,1,H100,bf16\nb,m/config.json,4096,1,8,16,2,H100,bf16\n"
                + "c,m/config.json,4096,1,16,16,1,H100,bf16\nd,m/config.json,4096,2,4,32,2,H100,bf16\n");
        Path plan = dir.resolve("plan.csv");
        MainTest.Run p = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "3",
                "--out", plan.toString());
        assertEquals(0, p.code(), p.err());
        // the chosen rows as the table's lines and ids, and what the determinant means
        assertTrue(p.out().matches("(?s).*chosen rows \\(0-based\\): \\[[0-9, ]+\\]: line [2-5] \\(id [a-d]\\), .*")
                && p.out().contains("larger is more informative"), p.out());
        List<String> lines = Files.readAllLines(plan);
        List<String> header = List.of(lines.get(0).split(",", -1));
        int predicted = header.indexOf("predicted_ms");
        int seq = header.indexOf("seq");
        int gpus = header.indexOf("gpus");
        int batch = header.indexOf("batch");
        int micro = header.indexOf("micro_batches");
        int tensor = header.indexOf("tensor");
        StringBuilder withMs = new StringBuilder(lines.get(0) + ",measured_ms\n");
        StringBuilder withRate = new StringBuilder(lines.get(0) + ",tokens_per_s_per_gpu\n");
        for (String l : lines.subList(1, lines.size())) {
            String[] f = l.split(",", -1);
            double ms = 1.07 * Double.parseDouble(f[predicted]);
            // the rate of that step: the tokens of every replica (gpus over tensor) over the step and the GPUs
            double tokens = Double.parseDouble(f[seq]) * Double.parseDouble(f[batch]) * Double.parseDouble(f[micro])
                    * Double.parseDouble(f[gpus]) / Double.parseDouble(f[tensor]);
            withMs.append(l).append(',').append(ms).append('\n');
            withRate.append(l).append(',').append(tokens / (ms / 1000) / Double.parseDouble(f[gpus])).append('\n');
        }
        Path byMs = dir.resolve("runs_ms.csv");
        Path byRate = dir.resolve("runs_rate.csv");
        Files.writeString(byMs, withMs);
        Files.writeString(byRate, withRate);
        MainTest.Run ms = MainTest.run("fit", "--calibrate", "gpu", "--runs", byMs.toString(), "--out",
                dir.resolve("ms.sdl").toString());
        MainTest.Run rate = MainTest.run("fit", "--calibrate", "gpu", "--runs", byRate.toString(), "--out",
                dir.resolve("rate.sdl").toString());
        assertEquals(0, ms.code(), ms.err());
        assertEquals(0, rate.code(), rate.err());
        // a plan of a table predict scored drops the scored columns: its measured throughput is measured too
        Path scored = dir.resolve("scored.csv");
        assertEquals(0, MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out",
                scored.toString()).code());
        Path plan2 = dir.resolve("plan2.csv");
        assertEquals(0, MainTest.run("plan", "--model", "gpu", "--candidates", scored.toString(), "--runs", "3",
                "--out", plan2.toString()).code());
        List<String> header2 = List.of(Files.readAllLines(plan2).get(0).split(",", -1));
        assertTrue(!header2.contains("low_ms") && !header2.contains("tokens_per_s_per_gpu")
                && header2.contains("predicted_ms"), header2.toString());
    }

    /**
     * A candidate table's global_batch gives each row its micro-batches (global batch over batch and replicas), as
     * predict --global-batch does one job's; one that does not divide, or a micro_batches beside it that disagrees,
     * is refused at its line; gbs is warned of as global_batch's other name.
     */
    @Test
    void aTablesGlobalBatchGivesItsMicroBatches(@TempDir Path dir) throws Exception {
        model(dir, LLAMA_8B);
        Path table = dir.resolve("gb.csv");
        Files.writeString(table, "transformer,seq,batch,global_batch,gpus,tensor,device,precision\n"
                + "m/config.json,4096,1,64,16,2,H100,bf16\n");
        MainTest.Run t = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(0, t.code(), t.err());
        MainTest.Run one = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--global-batch", "64", "--gpus", "16", "--tensor", "2", "--device", "H100",
                "--precision", "bf16", "--json");
        assertEquals(0, one.code(), one.err());
        double ms = new ObjectMapper().readTree(one.out()).get("ms").asDouble();
        List<String> out = t.out().lines().toList();
        int col = List.of(out.get(0).split(",", -1)).indexOf("predicted_ms");
        assertEquals(ms, Double.parseDouble(out.get(1).split(",", -1)[col]), 1e-3, t.out());
        // the option gives it to rows without either column
        Path plain = dir.resolve("plain.csv");
        Files.writeString(plain, "transformer,seq,batch,gpus,tensor,device,precision\n"
                + "m/config.json,4096,1,16,2,H100,bf16\n");
        MainTest.Run dflt = MainTest.run("predict", "--model", "gpu", "--candidates", plain.toString(),
                "--global-batch", "64");
        assertEquals(0, dflt.code(), dflt.err());
        assertEquals(out.get(1).split(",", -1)[col], dflt.out().lines().toList().get(1).split(",", -1)[
                List.of(dflt.out().lines().toList().get(0).split(",", -1)).indexOf("predicted_ms")], dflt.out());
        Files.writeString(table, "transformer,seq,batch,global_batch,gpus,tensor,device,precision\n"
                + "m/config.json,4096,1,60,16,2,H100,bf16\n");
        MainTest.Run odd = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(Main.BAD_INPUT, odd.code(), odd.err());
        assertTrue(odd.err().contains("gb.csv:2: global_batch 60 is not a multiple of batch 1 x 8 data-parallel "
                + "replicas (8)"), odd.err());
        Files.writeString(table, "transformer,seq,batch,global_batch,micro_batches,gpus,tensor,device,precision\n"
                + "m/config.json,4096,1,64,4,16,2,H100,bf16\n");
        MainTest.Run both = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(Main.BAD_INPUT, both.code(), both.err());
        assertTrue(both.err().contains("global_batch 64 and micro_batches 4 disagree") && both.err().contains(
                "makes it 8 micro-batches"), both.err());
        Files.writeString(table, "transformer,seq,batch,gbs,gpus,tensor,device,precision\n"
                + "m/config.json,4096,1,64,16,2,H100,bf16\n");
        // another framework's name for a count is that column without a doubt: refused, not read as absent
        MainTest.Run alias = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(Main.BAD_INPUT, alias.code(), alias.err());
        assertTrue(alias.err().contains("column 'gbs' is another framework's name for 'global_batch'")
                && alias.err().contains("rename it global_batch"), alias.err());
        MainTest.Run twice = MainTest.run("predict", "--model", "gpu", "--candidates", plain.toString(),
                "--global-batch", "64", "--micro-batches", "4");
        assertEquals(Main.USAGE, twice.code(), twice.err());
    }

    /**
     * A user catalog's row whose figures no GPU has together (a peak in GFLOP/s for TFLOP/s, a bandwidth in TB/s)
     * is warned of at its line; an NVLink domain smaller than the row's node is refused there, as the option is.
     */
    @Test
    void aCatalogsUnitSlipsAreSaidAndASmallDomainRefused(@TempDir Path dir) throws Exception {
        Path dev = dir.resolve("dev.csv");
        String header = "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS,bf16_TFLOPS,"
                + "gpus_per_node,nvlink_domain,link_kind,link_GBps\n";
        Files.writeString(dev, header + "SlipGPU,80,3.35,132,1980,50,67,990,8,8,NVLink4,450\n");
        MainTest.Run bw = MainTest.run("devices", "--devices", dev.toString());
        assertEquals(0, bw.code(), bw.err());
        assertTrue(bw.err().contains("dev.csv:2: 'SlipGPU' does 2.00e+04 FP32 operations a byte of memory traffic"),
                bw.err());
        Files.writeString(dev, header + "SlipGPU,80,3350,132,1980,50,0.0669,990,8,8,NVLink4,450\n");
        MainTest.Run peak = MainTest.run("devices", "--devices", dev.toString());
        assertTrue(peak.err().contains("dev.csv:2: 'SlipGPU' does 0.256 FP32 operations a compute unit a clock"),
                peak.err());
        Files.writeString(dev, header + "GoodGPU,80,3350,132,1980,50,67,990,8,8,NVLink4,450\n");
        MainTest.Run good = MainTest.run("devices", "--devices", dev.toString());
        assertEquals(0, good.code(), good.err());
        assertFalse(good.err().contains("operations a"), good.err());
        Files.writeString(dev, header + "SmallDomain,80,3350,132,1980,50,67,990,8,3,NVLink4,450\n");
        MainTest.Run domain = MainTest.run("devices", "--devices", dev.toString());
        assertEquals(Main.BAD_INPUT, domain.code(), domain.err());
        assertTrue(domain.err().contains("dev.csv:2: nvlink_domain 3 with gpus_per_node 8: an NVLink domain of 3 GPUs "
                + "is smaller than a node of 8"), domain.err());
        Files.writeString(dev, header + "OddDomain,80,3350,132,1980,50,67,990,8,12,NVLink4,450\n");
        MainTest.Run odd = MainTest.run("devices", "--devices", dev.toString());
        assertEquals(Main.BAD_INPUT, odd.code(), odd.err());
        assertTrue(odd.err().contains("is no whole number of nodes of 8"), odd.err());
        // a bridged pair (H100 NVL) is a domain of its own
        Files.writeString(dev, header + "PairGPU,80,3350,132,1980,50,67,990,8,2,NVLink4,450\n");
        assertEquals(0, MainTest.run("devices", "--devices", dev.toString()).code());
        Files.writeString(dev, header + "SlipBF16,80,3350,132,1980,50,67,990000,8,8,NVLink4,450\n");
        MainTest.Run bf16 = MainTest.run("devices", "--devices", dev.toString());
        assertTrue(bf16.err().contains("dev.csv:2: bf16_TFLOPS 990000.0 is 14776 times the FP32 vector peak"),
                bf16.err());
        // and the bundled catalog has no such row
        MainTest.Run bundled = MainTest.run("devices");
        assertFalse(bundled.err().contains("operations a"), bundled.err());
    }

    /** Java's number syntax is no table's number: a measured time of 0x1p12 is refused at its cell. */
    @Test
    void javaNumberSyntaxIsRefusedInARunsTable(@TempDir Path dir) throws Exception {
        model(dir, LLAMA_8B);
        Path runs = dir.resolve("runs.csv");
        for (String bad : List.of("0x1p12", "5000d", "5000f")) {
            Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,measured_ms\n"
                    + "m/config.json,4096,1,8,H100,bf16," + bad + "\n");
            MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                    dir.resolve("x.sdl").toString());
            assertEquals(Main.BAD_INPUT, r.code(), bad + ": " + r.err());
            assertTrue(r.err().contains("runs.csv:2") && r.err().contains(bad), r.err());
        }
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, "transformer,seq,batch,gpus,tensor,device,precision,inter_node_gbps\n"
                + "m/config.json,4096,1,16,2,H100,bf16,0xC80p0\n");
        MainTest.Run cell = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString());
        assertEquals(Main.BAD_INPUT, cell.code(), cell.err());
        assertTrue(cell.err().contains("jobs.csv:2"), cell.err());
    }

    /** Runs that all weigh 0 calibrate nothing: refused, not reported as a calibration. */
    @Test
    void aCalibrationOnRunsOfNoWeightIsRefused(@TempDir Path dir) throws Exception {
        model(dir, LLAMA_8B);
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,measured_ms,fit_weight\n"
                + "m/config.json,4096,1,8,H100,bf16,900,0\nm/config.json,4096,2,8,H100,bf16,1700,0\n");
        Path out = dir.resolve("x.sdl");
        MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                out.toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("every run has fit_weight 0"), r.err());
        assertFalse(Files.exists(out));
        // a run of weight 0 beside one of weight 1 is kept out of the calibration and its counts
        Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,measured_ms,fit_weight\n"
                + "m/config.json,4096,1,8,H100,bf16,900,1\nm/config.json,4096,2,8,H100,bf16,1700,0\n");
        MainTest.Run mixed = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                out.toString());
        assertEquals(0, mixed.code(), mixed.err());
        assertTrue(mixed.out().contains("calibrated gpu on 1 run ") && mixed.err().contains("1 run of fit_weight 0 is "
                + "kept out of the calibration"), mixed.out() + mixed.err());
        MainTest.Run shown = MainTest.run("inspect", "--model", out.toString(), "--json");
        assertTrue(shown.out().contains("\"calibration_runs\" : 1"), shown.out());
    }

    /**
     * A network given in range is taken as given, whatever share of it a node's groups get: 0.0015 Gb/s between
     * nodes of 8 GPUs whose tensor-parallel pairs share it was refused with half of it in the message.
     */
    @Test
    void aSlowNetworkInRangeIsTaken() {
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "1024", "--batch", "1", "--data-parallel", "16", "--tensor", "2", "--gpus-per-node", "8",
                "--inter-node-gbps", "0.0015", "--device", "H100", "--precision", "bf16");
        assertEquals(0, r.code(), r.err());
    }

    /**
     * A layout search skips a layout of more pipeline steps than any iteration runs and ranks the others; it
     * searches every interleaving the layers split into (5 chunks a stage for 80 layers on 4 stages, as recipes run).
     */
    @Test
    void layoutsSkipsAnAbsurdScheduleAndSearchesEveryInterleaving(@TempDir Path dir) throws Exception {
        MainTest.Run huge = MainTest.run("layouts", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--gpus", "8", "--global-batch", "40000000", "--device", "H100", "--precision", "bf16");
        assertEquals(0, huge.code(), huge.err());
        Path csv = dir.resolve("l.csv");
        MainTest.Run seventy = MainTest.run("layouts", "--model", "gpu", "--transformer", LLAMA_70B.toString(),
                "--seq", "4096", "--gpus", "64", "--global-batch", "64", "--device", "H100", "--precision", "bf16",
                "--out", csv.toString());
        assertEquals(0, seventy.code(), seventy.err());
        List<String> rows = Files.readAllLines(csv);
        List<String> header = List.of(rows.get(0).split(",", -1));
        int p = header.indexOf("pipeline");
        int v = header.indexOf("virtual_stages");
        assertTrue(rows.stream().skip(1).map(l -> l.split(",", -1)).anyMatch(f -> f[p].equals("4")
                && f[v].equals("5")), "no layout of 4 stages x 5 chunks");
        assertTrue(rows.stream().skip(1).map(l -> l.split(",", -1)).noneMatch(f -> f[p].equals("4")
                && f[v].equals("3")), "4 stages x 3 chunks do not split 80 layers");
    }

    /** A split refused names the chunks a stage that work with the stages asked, and the stages that work. */
    @Test
    void aRefusedSplitNamesTheChunksThatWork() {
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA_70B.toString(), "--seq",
                "4096", "--batch", "1", "--micro-batches", "8", "--gpus", "64", "--tensor", "4", "--pipeline", "4",
                "--virtual-stages", "3", "--device", "H100", "--precision", "bf16");
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("with 4 pipeline stages the chunks a stage (virtual stages) may be 1, 2, 4, 5, "
                + "10, 20;"), r.err());
    }

    /** Ids a plan would write twice are refused by plan, not by the calibration after the runs are measured. */
    @Test
    void aPlanRefusesAnIdGivenTwice(@TempDir Path dir) throws Exception {
        small(dir);
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, "id,transformer,seq,batch,gpus,device,precision\n"
                + "same,m/config.json,4096,1,8,H100,bf16\nsame,m/config.json,4096,2,8,H100,bf16\n");
        MainTest.Run r = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "1");
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("jobs.csv:3: id 'same' names the candidate of line 2 too"), r.err());
        Files.writeString(jobs, "id,transformer,seq,batch,gpus,device,precision\n"
                + "a,m/config.json,4096,1,8,H100,bf16\nb,m/config.json,4096,2,8,H100,bf16\n");
        MainTest.Run budget = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(),
                "--budget-gpu-hours", "1e-9");
        assertEquals(Main.USAGE, budget.code(), budget.err());
        assertTrue(budget.err().matches("(?s).*--budget-gpu-hours 0\\.000000001 GPU-hours is below the cheapest "
                + "candidate's cost [0-9.]+(E-[0-9]+)?\\s*"), budget.err());
    }

    /**
     * A model calibrated on one GPU's runs says so when it predicts a job on another: the shared coefficients moved
     * that job's prediction too.
     */
    @Test
    void aCalibratedModelSaysWhenItPredictsAnotherGpu(@TempDir Path dir) throws Exception {
        Path cal = RoundSeventeenCliTest.calibratedOnH100(dir);
        String[] job = {"predict", "--model", cal.toString(), "--transformer", LLAMA_8B.toString(), "--seq", "4096",
            "--batch", "1", "--gpus", "8", "--precision", "bf16", "--device"};
        MainTest.Run b200 = MainTest.run(HostileCliTest.concat(job, "B200"));
        assertEquals(0, b200.code(), b200.err());
        assertTrue(b200.err().contains("this model was calibrated on runs of NVIDIA H100 80GB HBM3 only"),
                b200.err());
        MainTest.Run h100 = MainTest.run(HostileCliTest.concat(job, "H100"));
        assertFalse(h100.err().contains("was calibrated on runs of"), h100.err());
        // a table's rows on another GPU: said once, naming the table
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, "transformer,seq,batch,gpus,device,precision\nm/config.json,4096,1,8,B200,bf16\n"
                + "m/config.json,4096,2,8,B200,bf16\nm/config.json,4096,1,8,H100,bf16\n");
        MainTest.Run table = MainTest.run("predict", "--model", cal.toString(), "--candidates", jobs.toString());
        assertEquals(0, table.code(), table.err());
        assertEquals(1, table.err().lines().filter(l -> l.contains("was calibrated on runs of")).count(),
                table.err());
        // a second calibration on B200 runs adds its GPU to the model's record, which inspect names
        Path b200runs = dir.resolve("b200.csv");
        Files.writeString(b200runs, "transformer,seq,batch,gpus,device,precision,measured_ms\n"
                + "m/config.json,4096,1,8,B200,bf16,500\nm/config.json,4096,2,8,B200,bf16,950\n"
                + "m/config.json,4096,4,8,B200,bf16,1850\n");
        Path twice = dir.resolve("twice.sdl");
        assertEquals(0, MainTest.run("fit", "--calibrate", cal.toString(), "--runs", b200runs.toString(), "--out",
                twice.toString()).code());
        MainTest.Run inspect = MainTest.run("inspect", "--model", twice.toString(), "--json");
        com.fasterxml.jackson.databind.JsonNode on = new ObjectMapper().readTree(inspect.out())
                .get("calibration_devices");
        assertEquals(List.of("NVIDIA B200", "NVIDIA H100 80GB HBM3"), List.of(on.get(0).asText(),
                on.get(1).asText()), inspect.out());
    }

}
