use super::*;

const ORDERS: &str = r##"openapi: 3.0.3
info: { title: Orders, version: "1" }
servers:
  - url: http://localhost:7800/samples/api/v1/
x-sluice:
  validation: on
  cors: { allow_origins: ["https://shop.example"] }
paths:
  /orders:
    post:
      operationId: createOrder
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: "#/components/schemas/Order" }
      responses:
        "201": { description: created }
  /orders/{id}:
    parameters:
      - { name: id, in: path, required: true, schema: { type: integer } }
    get:
      operationId: getOrder
      parameters:
        - { $ref: "#/components/parameters/Verbose" }
      responses:
        "200":
          description: the order
          content: { application/json: { schema: { $ref: "#/components/schemas/Order" } } }
  /orders/latest:
    get:
      operationId: latestOrder
      responses: { "200": { description: ok } }
components:
  parameters:
    Verbose: { name: verbose, in: query, schema: { type: boolean } }
  schemas:
    Order: { type: object, properties: { item: { type: string } } }
"##;

#[test]
fn load_reads_operations_base_path_and_options_when_valid() {
    let api = load("orders.yaml", ORDERS).unwrap();
    assert_eq!(api.version, SpecVersion::OpenApi30);
    assert_eq!(api.base_path, "/samples/api/v1");
    assert!(api.options.validation);
    assert_eq!(
        api.options.cors.as_ref().map(|c| c.allow_origins.clone()),
        Some(vec!["https://shop.example".to_string()])
    );
    let ids: Vec<&str> = api.operations.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["createOrder", "getOrder", "latestOrder"]);
    let get = &api.operations[1];
    assert_eq!(get.method, "GET");
    assert_eq!(get.line, 22);
    let names: Vec<(&str, Location)> = get
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.location))
        .collect();
    assert_eq!(
        names,
        [("id", Location::Path), ("verbose", Location::Query)]
    );
    assert!(api.operations[0].body_required);
    assert!(api.operations[0].request_body.is_some());
}

#[test]
fn operations_at_prefers_literal_segments_when_templates_overlap() {
    let api = load("orders.yaml", ORDERS).unwrap();
    let found = api.operations_at("/samples/api/v1/orders/latest");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0.id, "latestOrder");
    let found = api.operations_at("/samples/api/v1/orders/7");
    assert_eq!(found[0].0.id, "getOrder");
    assert_eq!(found[0].1, [("id".to_string(), "7".to_string())]);
    assert!(api.operations_at("/samples/api/v1/nothing").is_empty());
    assert!(api.operations_at("/elsewhere/orders").is_empty());
}

#[test]
fn load_names_every_operation_without_an_operation_id_with_its_line() {
    let src = "openapi: 3.1.0\ninfo: { title: t, version: '1' }\npaths:\n  /a:\n    get:\n      responses: {}\n    post:\n      responses: {}\n  /b:\n    delete:\n      operationId: del\n";
    let problems = load("a.yaml", src).unwrap_err();
    let got: Vec<(usize, String)> = problems
        .iter()
        .map(|d| (d.line, d.message.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (5, "operation GET /a has no operationId".to_string()),
            (7, "operation POST /a has no operationId".to_string()),
        ]
    );
}

#[test]
fn load_reads_swagger_2_parameters_and_body_when_given() {
    let src = r#"{
  "swagger": "2.0",
  "basePath": "/v2",
  "paths": {
    "/pets/{petId}": {
      "put": {
        "operationId": "updatePet",
        "parameters": [
          { "name": "petId", "in": "path", "required": true, "type": "integer" },
          { "name": "body", "in": "body", "required": true, "schema": { "type": "object" } }
        ],
        "responses": { "200": { "description": "ok", "schema": { "type": "object" } } }
      }
    }
  }
}"#;
    let api = load("pets.json", src).unwrap();
    assert_eq!(api.version, SpecVersion::Swagger2);
    assert_eq!(api.base_path, "/v2");
    let op = &api.operations[0];
    assert_eq!(op.line, 6);
    assert_eq!(
        op.parameters[0].schema,
        serde_json::json!({"type": "integer"})
    );
    assert!(op.body_required);
    assert_eq!(op.responses[0].0, "200");
    assert!(op.responses[0].1.is_some());
}

#[test]
fn load_rejects_documents_when_they_are_not_openapi() {
    for src in [
        "a: 1\n",
        "- 1\n",
        "openapi: 4.0.0\npaths: {}\n",
        "openapi: 3.0.0\n",
        "{",
    ] {
        assert!(load("x.yaml", src).is_err(), "{src}");
    }
    let e = load(
        "x.yaml",
        "openapi: 3.0.0\nx-sluice: { validate: on }\npaths:\n  /a: { get: { operationId: a } }\n",
    )
    .unwrap_err();
    assert!(
        e[0].message
            .contains("unknown `x-sluice` setting `validate`"),
        "{e:?}"
    );
}

#[test]
fn operations_at_matches_the_root_operation_when_the_path_is_the_base_path() {
    let src = "openapi: 3.0.3\nservers: [{ url: /echo }]\npaths:\n  /:\n    post: { operationId: echo }\n";
    let api = load("echo.yaml", src).unwrap();
    assert_eq!(api.operations_at("/echo")[0].0.id, "echo");
    assert_eq!(api.operations_at("/echo/")[0].0.id, "echo");
    assert!(api.operations_at("/echo/x").is_empty());
}
