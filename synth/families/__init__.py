"""Every procedural family, one module per group of families of a capability. The registry
(`synth.family.FAMILIES`) imports these modules on its first lookup; importing the package
itself registers nothing."""
