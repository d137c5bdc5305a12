package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.cli.MainTest.Run;

/**
 * {@code --memory-format} and the {@code memory_format} column: an NCHW ResNet in BF16 on an H200 is predicted slower
 * than channels-last, with a note saying so, the setting is echoed, and a value that cannot apply (a CPU model, a
 * transformer, an unknown name) is refused naming the option or the file's line.
 */
class MemoryFormatCliTest {
    private static JsonNode predict(String... extra) throws Exception {
        List<String> a = new java.util.ArrayList<>(List.of("predict", "--model", "gpu", "--graph",
                MainTest.graph("resnet18_r64").toString(), "--batch", "64", "--device", "H200", "--precision",
                "bf16", "--json"));
        a.addAll(List.of(extra));
        Run r = MainTest.run(a.toArray(new String[0]));
        assertEquals(0, r.code(), r.err());
        return new ObjectMapper().readTree(r.out());
    }

    @Test
    void theLayoutIsGivenEchoedAndCharged() throws Exception {
        JsonNode nchw = predict();
        JsonNode last = predict("--memory-format", "channels_last");
        assertEquals("nchw", nchw.get("workload").get("memory_format").asText());
        assertEquals("channels_last", last.get("workload").get("memory_format").asText());
        assertTrue(nchw.get("ms").asDouble() > 1.3 * last.get("ms").asDouble(), nchw.get("ms") + " " + last.get("ms"));
        assertTrue(nchw.get("warnings").toString().contains("--memory-format channels_last"),
                nchw.get("warnings").toString());
        assertTrue(!last.get("warnings").toString().contains("--memory-format"), last.get("warnings").toString());
    }

    @Test
    void aSettingThatCannotApplyIsRefused(@TempDir Path dir) throws Exception {
        Run unknown = MainTest.run("predict", "--model", "gpu", "--graph", MainTest.graph("resnet18_r64").toString(),
                "--batch", "8", "--device", "H200", "--memory-format", "nhcw");
        assertTrue(unknown.code() != 0 && unknown.err().contains("--memory-format") && unknown.err().contains("'nhcw'"),
                unknown.err());
        Run cpu = MainTest.run("predict", "--model", "cpu-ddp", "--graph", MainTest.graph("resnet18_r64").toString(),
                "--batch", "8", "--memory-format", "channels_last");
        assertTrue(cpu.code() != 0 && cpu.err().contains("--memory-format") && cpu.err().contains("CPU"), cpu.err());
        Path cfg = ClusterPredictCliTest.config(dir);
        Run transformer = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--device", "H200", "--precision", "bf16", "--memory-format", "channels_last");
        assertTrue(transformer.code() != 0 && transformer.err().contains("--memory-format"), transformer.err());
        Run layouts = MainTest.run("layouts", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--gpus", "64", "--global-batch", "64", "--device", "H100 SXM", "--memory-format", "nchw");
        assertTrue(layouts.code() != 0 && layouts.err().contains("--memory-format"), layouts.err());
        // a table: a graph row takes the column, a transformer row is refused at its line
        Files.copy(MainTest.graph("resnet18_r64"), dir.resolve("r18.onnx"));
        Path table = dir.resolve("jobs.csv");
        Files.writeString(table, "graph,batch,device,precision,memory_format\n"
                + "r18.onnx,64,H200,bf16,channels_last\nr18.onnx,64,H200,bf16,nchw\n");
        Path out = dir.resolve("scored.csv");
        Run ok = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString(), "--out", out.toString());
        assertEquals(0, ok.code(), ok.err());
        List<String> rows = Files.readAllLines(out);
        int at = List.of(rows.get(0).split(",")).indexOf("predicted_ms");
        double channelsLast = Double.parseDouble(rows.get(1).split(",")[at]);
        assertTrue(Double.parseDouble(rows.get(2).split(",")[at]) > 1.3 * channelsLast, rows.toString());
        Files.writeString(table, "transformer,seq,batch,device,precision,memory_format\n"
                + dir.relativize(cfg) + ",2048,1,H200,bf16,channels_last\n");
        Run refused = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertTrue(refused.code() != 0 && refused.err().contains("jobs.csv:2:")
                && refused.err().contains("memory_format"), refused.err());
    }
}
