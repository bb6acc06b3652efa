"""Loading a compiled domain into Neo4j and extracting scenario subgraphs from it."""
