package org.scaledl.cli;

import java.nio.file.Path;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.GpuData;

/**
 * The one place commands get their GPU catalog from: the bundled catalog, a user's {@code --devices} file added to it
 * (never replacing a bundled GPU: {@link DeviceCatalog#plusUser}), and the GPUs a data root describes.
 */
final class Catalogs {
    private Catalogs() {
    }

    /** The bundled catalog with a user's devices, if a file is given. */
    static DeviceCatalog of(Path extra) {
        DeviceCatalog bundled = DeviceCatalog.bundled();
        return extra == null ? bundled : bundled.plusUser(DeviceCatalog.read(extra));
    }

    /**
     * Says on stderr, once the command has succeeded, which GPU a short name was read as where it fits others too
     * ({@code --device A100}: the A100-SXM4-80GB, not the 40 GB or PCIe parts), naming them.
     */
    static void sayAlsoFitting(DeviceCatalog catalog, String option, String typed, org.scaledl.workload.Device chosen) {
        java.util.List<org.scaledl.workload.Device> others = catalog.alsoFitting(typed, chosen);
        if (!others.isEmpty()) {
            Main.sayOnSuccess("scaledl: note: " + option + " " + org.scaledl.InvalidInputException.escaped(typed)
                    + " is read as " + chosen.name() + "; it fits " + String.join(", ", others.stream()
                    .map(org.scaledl.workload.Device::name).toList()) + " too: name one of those for it");
        }
    }

    /**
     * What an unknown device's error adds where {@code model} was calibrated on runs of GPUs {@code of} selects among
     * its calibration's (GPUs a {@code --devices} file described then: the file is what is missing); empty else.
     */
    static String calibratedOnHint(org.scaledl.model.RuntimePredictor p, String model,
            java.util.function.Predicate<String> of) {
        java.util.List<String> named = p.provenance().calibrationDevices().stream().filter(of).toList();
        return named.isEmpty() ? "" : "; " + model + " was calibrated on runs of " + String.join(", ", named.stream()
                .map(n -> "'" + n + "'").toList()) + ": give the --devices file that described "
                + (named.size() == 1 ? "it" : "them");
    }

    /** {@link #of(Path)} plus the GPUs a data root describes ({@link GpuData#catalogFor}). */
    static DeviceCatalog of(Path extra, Path dataRoot) {
        return GpuData.catalogFor(dataRoot, of(extra));
    }
}
