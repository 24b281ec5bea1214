// Cities on the board. A file of cities (POST /api/read, `projection` not null) is drawn as the
// model reads it: the azimuthal equidistant projection of its cities about their centre, in km,
// mapped into the unit square (`mapping`). A city moved or added on the board is put back on the
// globe through the inverse of both, so its latitude and longitude, and what the server measures
// great-circle lengths on, follow it. The forward projection is the server's
// (ptrnet/solvers/geodesy.py::azimuthal_equidistant); tests/test_web_geographic_page.py checks
// this inverse against it.

const RAD = Math.PI / 180;

/** [lon, lat] degrees of the plane point [x, y] (km; x east, y north) under the azimuthal
 * equidistant projection about `centre` ([lon, lat] degrees) on a sphere of `radius` km
 * (Snyder, "Map Projections: A Working Manual", 1987, eqs. 20-14 and 20-15), or null for a
 * point at or past the centre's antipode, where no place of the globe lies. */
export function inverseAzimuthal([x, y], [lon0, lat0], radius) {
  const rho = Math.hypot(x, y);
  if (rho === 0) return [lon0, lat0];
  const c = rho / radius;
  if (!(c < Math.PI)) return null;
  const phi0 = lat0 * RAD;
  const [sinc, cosc] = [Math.sin(c), Math.cos(c)];
  const sinLat = cosc * Math.sin(phi0) + (y * sinc * Math.cos(phi0)) / rho;
  const lat = Math.asin(Math.min(1, Math.max(-1, sinLat)));
  const dlon = Math.atan2(x * sinc, rho * Math.cos(phi0) * cosc - y * Math.sin(phi0) * sinc);
  return [wrapLongitude(lon0 + dlon / RAD), lat / RAD];
}

/** A longitude in [-180, 180): 190 is -170. */
function wrapLongitude(lon) {
  const wrapped = ((((lon + 180) % 360) + 360) % 360) - 180;
  return lon === 180 ? 180 : wrapped;
}

/** TSPLIB's `DDD.MM` of decimal degrees (38.4 is 38.24: 38 degrees 24 minutes), the inverse
 * of ptrnet/solvers/distances.py::tsplib_degrees. */
function tsplibDegrees(degrees) {
  const whole = Math.trunc(degrees);
  return whole + 0.6 * (degrees - whole);
}

/** How a file writes [lon, lat] degrees, by the `form` of its rule (Distances.form). */
const FORMS = {
  lon_lat: ([lon, lat]) => [lon, lat],
  tsplib_lat_lon: ([lon, lat]) => [tsplibDegrees(lat), tsplibDegrees(lon)],
};

/** The file's coordinates of the board point `unit` (in [0, 1]^2): back through `frame` (the
 * map into the unit square, `unit = (x - offset) / scale`, or null) to the plane in km, through
 * `projection` ({centre, radius_km, form}) to the globe; null where the plane has no place of
 * the globe (past the antipode) or the form is unknown. */
export function unproject(unit, frame, projection) {
  const plane = frame ? unit.map((v, k) => v * frame.scale + frame.offset[k]) : unit;
  const form = FORMS[projection.form];
  const place = form && inverseAzimuthal(plane, projection.centre, projection.radius_km);
  return place ? form(place) : null;
}
