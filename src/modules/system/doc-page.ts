const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The docs page: Swagger UI served from this service (no CDN), reading `?spec` next to it. */
export function docPage(domain: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escape(domain)} content API</title>
<link rel="stylesheet" href="/_static/swagger-ui/swagger-ui.css">
<link rel="icon" href="/_static/swagger-ui/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/_static/swagger-ui/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: location.pathname + '?spec', dom_id: '#swagger-ui', deepLinking: true });
</script>
</body>
</html>
`;
}
