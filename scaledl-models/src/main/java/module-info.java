/** Fitted predictors bundled with the library, by name ({@link org.scaledl.models.BundledModels}). */
module org.scaledl.models {
    requires transitive org.scaledl.core;

    exports org.scaledl.models;
}
