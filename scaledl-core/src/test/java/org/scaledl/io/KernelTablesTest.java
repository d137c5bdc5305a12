package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.OpMeasurement;

class KernelTablesTest {
    private static final DeviceCatalog DEVICES = DeviceCatalog.bundled();

    @Test
    void rowsBecomeLayersWithTheOperatorsCost(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("bmm.csv"), "row_id,gpu,op,B,M,N,K,flops,latency_ms\n"
                + "0,Tesla T4,bmm,2,3,5,7,420,0.01\n");
        Files.writeString(dir.resolve("linear.csv"), "row_id,gpu,op,B,M,N,K,flops,latency_ms\n"
                + "0,Tesla T4,linear,1,4,8,16,1024,0.02\n");
        Files.writeString(dir.resolve("elem.csv"), "row_id,gpu,op,B,H,n_inputs,latency_ms\n"
                + "0,Tesla T4,add,10,20,2,0.03\n1,Tesla T4,gelu,10,20,1,0.04\n");
        Files.writeString(dir.resolve("conv.csv"), "row_id,gpu,op,batch,Cin,Cout,kernel,stride,padding,H,W,out_H,"
                + "out_W,flops,latency_ms\n0,Tesla T4,conv,2,3,4,3,1,1,8,8,8,8,27648,0.05\n");
        List<OpMeasurement> rows = KernelTables.neusight(dir, DEVICES);
        assertEquals(5, rows.size());
        LayerFeatures bmm = rows.get(0).features();
        assertEquals(OpFamily.DENSE, bmm.family());
        assertEquals(2.0 * 2 * 3 * 5 * 7, bmm.flopsFwd(), "bmm FLOPs as NeuSight counts them");
        assertEquals(4.0 * (2 * 3 * 5 + 2 * 5 * 7 + 2 * 3 * 7), bmm.bytesFwd());
        LayerFeatures linear = rows.get(1).features();
        assertEquals(16 * 8 + 16, linear.params(), "weight [N,K] and bias [K]");
        assertTrue(linear.flopsFwd() >= 2.0 * 4 * 8 * 16);
        assertEquals(OpFamily.ELEMENTWISE, rows.get(2).features().family());
        assertEquals(4.0 * 3 * 200, rows.get(2).features().bytesFwd(), "two inputs and one output of 10x20");
        assertEquals(4.0 * 2 * 200, rows.get(3).features().bytesFwd());
        LayerFeatures conv = rows.get(4).features();
        assertEquals(OpFamily.CONV, conv.family());
        assertEquals(27648, conv.flopsFwd(), "2·N·K·C·R·S·P·Q, as the table's own flops column");
        assertTrue(rows.stream().allMatch(m -> m.origin() == OpMeasurement.Origin.BENCHMARK));
    }

    @Test
    void badRowsNameFileAndLine(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("bmm.csv"), "row_id,gpu,op,B,M,N,K,flops,latency_ms\n"
                + "0,Tesla T4,bmm,2,3,5,7,420,0.01\n1,Voodoo2,bmm,2,3,5,7,420,0.01\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> KernelTables.neusight(dir,
                DEVICES));
        assertTrue(e.getMessage().contains("bmm.csv:3") && e.getMessage().contains("Voodoo2"), e.getMessage());

        Files.writeString(dir.resolve("bmm.csv"), "row_id,gpu,op,B,M,N,K,flops,latency_ms\n"
                + "0,Tesla T4,bmm,2,3,5,7,420,-1\n");
        e = assertThrows(InvalidInputException.class, () -> KernelTables.neusight(dir, DEVICES));
        assertTrue(e.getMessage().contains("bmm.csv:2") && e.getMessage().contains("latency_ms"), e.getMessage());

        Files.writeString(dir.resolve("bmm.csv"), "row_id,gpu,op,B,M,N,K,flops,latency_ms\n"
                + "0,Tesla T4,bmm,2,0,5,7,420,0.1\n");
        e = assertThrows(InvalidInputException.class, () -> KernelTables.neusight(dir, DEVICES));
        assertTrue(e.getMessage().contains("bmm.csv:2") && e.getMessage().contains("M"), e.getMessage());

        Path empty = Files.createDirectory(dir.resolve("empty"));
        e = assertThrows(InvalidInputException.class, () -> KernelTables.neusight(empty, DEVICES));
        assertTrue(e.getMessage().contains("no kernel table"), e.getMessage());
    }
}
