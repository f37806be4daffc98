//! `OpenAPI` import and detection at scale: a generated description with thousands of
//! operations (shared component schemas with nested objects and arrays, path, query and
//! body fields, error responses), as YAML and as JSON.
//!
//! `cargo bench --bench openapi_import` (add `-- --quick` for a short run).

use std::fmt::Write as _;
use std::hint::black_box;

use anvil_bench::air::detect;
use anvil_bench::air::openapi::{self, Document};
use criterion::{Criterion, criterion_group, criterion_main};

const OPERATIONS: usize = 3000;
const SCHEMAS: usize = 60;

/// A YAML description with `operations` operations (half GET with parameters, half POST
/// with a body) over `SCHEMAS` component schemas.
fn synthetic_yaml(operations: usize) -> String {
    let mut s =
        String::from("openapi: 3.0.3\ninfo:\n  title: Synthetic\n  version: 1.0.0\npaths:\n");
    for p in 0..operations / 2 {
        let schema = p % SCHEMAS;
        let _ = write!(
            s,
            "  /things{p}/{{thingId}}:
    parameters:
      - $ref: '#/components/parameters/ThingId'
    get:
      operationId: getThing{p}
      description: Fetch thing {p}.
      parameters:
        - name: limit
          in: query
          schema: {{type: integer, maximum: 100}}
        - name: cursor
          in: query
          description: Where the page starts.
          schema: {{type: string}}
        - name: X-Request-Timeout
          in: header
          schema: {{type: integer}}
      responses:
        '200':
          description: The thing.
          content:
            application/json:
              schema: {{$ref: '#/components/schemas/Thing{schema}'}}
        '404': {{$ref: '#/components/responses/NotFound'}}
        '429':
          description: Slow down.
    post:
      operationId: createThing{p}
      requestBody:
        required: true
        content:
          application/json:
            schema: {{$ref: '#/components/schemas/Thing{schema}'}}
      responses:
        '201':
          description: Created.
        '400':
          description: Invalid thing.
        '409':
          description: Already exists.
"
        );
    }
    s.push_str(
        "components:
  parameters:
    ThingId: {name: thingId, in: path, required: true, schema: {type: string, format: uuid}}
  responses:
    NotFound: {description: Not found.}
  schemas:
    Owner:
      type: object
      properties:
        email: {type: string, format: email}
        displayName: {type: string, description: Shown to others.}
        address:
          type: object
          properties:
            city: {type: string}
            postcode: {type: string}
",
    );
    for i in 0..SCHEMAS {
        let _ = write!(
            s,
            "    Thing{i}:
      type: object
      required: [id, name]
      properties:
        id: {{type: string, format: uuid, readOnly: true}}
        name: {{type: string, description: Human name of thing {i}.}}
        sizeBytes: {{type: integer, format: int64}}
        ttl: {{type: integer}}
        price: {{type: number, description: What it costs.}}
        owner: {{$ref: '#/components/schemas/Owner'}}
        tags:
          type: array
          items:
            type: object
            properties:
              key: {{type: string}}
              value: {{type: string}}
        kind:
          oneOf:
            - {{type: object, properties: {{radius: {{type: number}}}}}}
            - {{type: object, properties: {{side: {{type: number}}}}}}
"
        );
    }
    s
}

fn bench(c: &mut Criterion) {
    let yaml = synthetic_yaml(OPERATIONS);
    let doc = Document::parse(yaml.clone(), "synthetic.yaml").unwrap();
    let imported = openapi::import(&doc).unwrap();
    let value: serde_json::Value = serde_yaml_ng::from_str(&yaml).unwrap();
    let json = serde_json::to_string_pretty(&value).unwrap();
    let fields: usize = imported.air.operations.iter().map(|o| o.fields.len()).sum();
    eprintln!(
        "synthetic description: {} operations, {fields} fields, {} deficiencies, {} KiB YAML, {} KiB JSON",
        imported.air.operations.len(),
        detect(&imported.air).len(),
        yaml.len() / 1024,
        json.len() / 1024
    );
    let mut group = c.benchmark_group("openapi");
    group.sample_size(10);
    group.bench_function("import_and_detect_3000_operations_yaml", |b| {
        b.iter(|| {
            let doc = Document::parse(black_box(yaml.clone()), "synthetic.yaml").unwrap();
            let imported = openapi::import(&doc).unwrap();
            black_box(detect(&imported.air))
        });
    });
    group.bench_function("import_and_detect_3000_operations_json", |b| {
        b.iter(|| {
            let doc = Document::parse(black_box(json.clone()), "synthetic.json").unwrap();
            let imported = openapi::import(&doc).unwrap();
            black_box(detect(&imported.air))
        });
    });
    group.bench_function("phase_parse_yaml", |b| {
        b.iter(|| black_box(Document::parse(black_box(yaml.clone()), "synthetic.yaml").unwrap()));
    });
    group.bench_function("phase_import", |b| {
        b.iter(|| black_box(openapi::import(&doc).unwrap()));
    });
    group.bench_function("phase_detect", |b| {
        b.iter(|| black_box(detect(&imported.air)));
    });
    group.bench_function("export_without_refinements_3000_operations_yaml", |b| {
        b.iter(|| black_box(openapi::export(&doc, &imported.air).unwrap()));
    });
    group.finish();
}

/// `detect` alone on an AIR of 50 and of 5,000 operations (target: ≤ 100 ms at 5,000).
fn bench_detect(c: &mut Criterion) {
    let mut group = c.benchmark_group("detect");
    group.sample_size(10);
    for operations in [50, 5000] {
        let doc = Document::parse(synthetic_yaml(operations), "synthetic.yaml").unwrap();
        let air = openapi::import(&doc).unwrap().air;
        assert_eq!(air.operations.len(), operations);
        group.bench_function(format!("{operations}_operations"), |b| {
            b.iter(|| black_box(detect(black_box(&air))));
        });
    }
    group.finish();
}

criterion_group!(benches, bench, bench_detect);
criterion_main!(benches);
