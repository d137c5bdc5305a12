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

    /** {@link #of(Path)} plus the GPUs a data root describes ({@link GpuData#catalogFor}). */
    static DeviceCatalog of(Path extra, Path dataRoot) {
        return GpuData.catalogFor(dataRoot, of(extra));
    }
}
