package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LocalMachineTest {
    static final String EPYC = """
            processor\t: 0
            vendor_id\t: AuthenticAMD
            model name\t: AMD EPYC 7B13
            flags\t\t: fpu vme sse sse2 avx avx2 fma
            
            processor\t: 1
            model name\t: AMD EPYC 7B13
            """;
    static final String XEON = "processor : 0\nmodel name : Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n"
            + "flags : sse avx2 avx512f avx512bw\n";
    static final String GRAVITON = "processor : 0\nFeatures : fp asimd evtstrm aes\nCPU part : 0xd0c\n";

    @Test
    void readsTheModelNameAndTheWidestVectorInstructions() {
        LocalMachine epyc = LocalMachine.parse(EPYC, 2, "amd64");
        assertEquals("AMD EPYC 7B13", epyc.cpu());
        assertEquals("avx2", epyc.simd());
        assertEquals("AMD EPYC 7B13, 2 cores, avx2", epyc.describe());
        assertEquals("avx512", LocalMachine.parse(XEON, 8, "amd64").simd());
        LocalMachine arm = LocalMachine.parse(GRAVITON, 4, "aarch64");
        assertEquals("aarch64", arm.cpu());
        assertEquals("neon", arm.simd());
    }

    @Test
    void aMachineCouldBeThisOneOnlyWhenTheCpuModelsAgree() {
        LocalMachine epyc = LocalMachine.parse(EPYC, 2, "amd64");
        assertTrue(epyc.couldBe("AMD EPYC 7B13 @ build-host"), "the companion's name for this machine");
        assertTrue(LocalMachine.parse("model name : AMD EPYC\n", 2, "amd64").couldBe("AMD EPYC 2-core VM"));
        assertFalse(epyc.couldBe("Intel(R) Xeon(R) Processor"));
        assertFalse(epyc.couldBe(""));
        LocalMachine xeon = LocalMachine.parse(XEON, 8, "amd64");
        assertFalse(xeon.couldBe("AMD EPYC 2-core VM"));
        assertTrue(LocalMachine.parse("model name : Intel(R) Xeon(R) Processor\n", 2, "amd64")
                .couldBe("Intel(R) Xeon(R) Processor"));
    }

    /**
     * A described machine is compared by what matters: the AMD EPYC host with AVX-512 is not the bundled cpu-ddp
     * machine (an AVX2 EPYC of 2 cores) though the names agree; more cores, another vendor or model number differ;
     * the same vendor, cores and vector units say nothing.
     */
    @Test
    void aDescribedMachineIsComparedByVendorModelCoresAndVectorUnits() {
        org.scaledl.workload.Device ddp = org.scaledl.workload.Device.cpu("AMD EPYC 2-core VM", 2, 256, 0, 0, 0);
        LocalMachine zen4 = LocalMachine.parse("model name : AMD EPYC\nflags : avx2 avx512f\n", 2, "amd64");
        assertTrue(zen4.couldBe(ddp.name()), "the names alone agree");
        assertEquals(java.util.List.of("vector units avx2 there, avx512 here"), zen4.differences(ddp));
        LocalMachine epyc = LocalMachine.parse(EPYC, 2, "amd64");
        assertTrue(epyc.differences(ddp).isEmpty(), epyc.differences(ddp).toString());
        assertEquals(java.util.List.of("2 cores there, 16 here"), LocalMachine.parse(EPYC, 16, "amd64")
                .differences(ddp));
        LocalMachine xeon = LocalMachine.parse(XEON, 2, "amd64");
        assertTrue(xeon.differences(ddp).contains("CPU vendor AMD there, Intel here"), xeon.differences(ddp)
                .toString());
        org.scaledl.workload.Device milan = org.scaledl.workload.Device.cpu("AMD EPYC 7763 @ lab", 2, 256, 0, 0, 0);
        assertEquals(java.util.List.of("CPU model 7763 there, 7b13 here"), epyc.differences(milan));
        JobOptions options = new JobOptions();
        options.model = "cpu-ddp";
        assertTrue(options.otherMachine(ddp.name(), java.util.Optional.of(ddp), zen4).orElseThrow()
                .contains("vector units avx2 there, avx512 here"));
        assertTrue(options.otherMachine(ddp.name(), java.util.Optional.empty(), zen4).isEmpty(),
                "known by name only: the names agree");
    }
}
