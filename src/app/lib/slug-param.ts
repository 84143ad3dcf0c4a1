// In charge of reading a workspace address from the URL: a slug, or null when the address is not
// one (malformed percent-encoding such as /w/%ZZ, capitals, anything a slug cannot contain), so
// pages answer "not found" instead of failing.
const SLUG = /^[a-z0-9-]{1,48}$/;

export async function slugParam(params: Promise<{ slug: string }>): Promise<string | null> {
  try {
    const { slug } = await params;
    return SLUG.test(slug) ? slug : null;
  } catch {
    return null;
  }
}
